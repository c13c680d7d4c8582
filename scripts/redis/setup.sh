#!/usr/bin/env bash
# Installs redis-server from Debian's packages when it is missing (idempotent). The test set-up
# (test/support/redis-server.ts) starts its own instance on 127.0.0.1; this script never starts one.
set -euo pipefail

if command -v redis-server >/dev/null 2>&1; then
  echo "redis-server present: $(redis-server --version)" >&2
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends redis-server
# Debian's package may start a system service; the tests do not use it, and leaving it running is harmless.
echo "redis-server installed: $(redis-server --version)" >&2
