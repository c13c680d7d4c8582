#!/usr/bin/env bash
# Set-up for users: Node 24 + pnpm (bootstrapped when the machine's Node is older than engines.node,
# 22.22.0), workspace dependencies, and a build of every package. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/toolchain.sh
pnpm install --frozen-lockfile --reporter=append-only >&2
pnpm run -s build >&2
