#!/usr/bin/env bash
# What the schema registry tests need, idempotent: Apicurio Registry's app from Maven Central
# (cached under .cache/registry) and a Java 21+ to run it (checked here, so a missing one is said
# before the tests start).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/registry/registry.sh fetch
echo "registry: Apicurio runs on $(bash scripts/registry/registry.sh java)" >&2
