#!/usr/bin/env bash
# The README's test command: installs everything the tests need on a fresh machine (toolchain,
# packages, Python readers, kcat and the Kafka broker's jars, Apicurio Registry, S3Proxy, chromium and tmux, podman and the test images), then runs
# the whole suite. The broker itself is started and stopped by the integration tests' global set-up.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/toolchain.sh
bash scripts/python/setup.sh # pyarrow, Polars, DuckDB, pyspark (Spark runs on the Java kafka/setup.sh installs)
bash scripts/kafka/setup.sh
bash scripts/redis/setup.sh
bash scripts/registry/setup.sh # Apicurio Registry (Maven Central) for the schema registry tests; runs on Java 21+
bash scripts/s3proxy/setup.sh # S3Proxy (Maven Central) for the object storage tests; runs on Java 17
bash scripts/test-tools.sh # chromium (report page) and tmux (terminal checks)
# Podman and the local Kafka and Redis images, so the tests start them with testcontainers; when the
# engine cannot be prepared it says so and exits 0, and the tests run both on the host as above.
bash scripts/containers/setup.sh
# Tests, benches and examples are type-checked too (the package builds leave them out), and linted.
pnpm exec tsc -p tsconfig.test.json
pnpm exec eslint .
pnpm exec prettier --check . >/dev/null
node scripts/checks/long-functions.mjs >/dev/null # no function over 80 lines (it names any that is)
mkdir -p .cache
status=0
pnpm exec vitest run --reporter=default --reporter=json --outputFile.json=.cache/vitest-report.json "$@" || status=$?
# The 15 slowest files, then a closing line any CI reads: "N passed, N failed".
node scripts/test-summary.mjs .cache/vitest-report.json || true
exit $status
