#!/usr/bin/env bash
# The README's test command: installs everything the tests need on a fresh machine (toolchain,
# packages, Python readers, kcat and the Kafka broker's jars, Apicurio Registry, S3Proxy, chromium
# and tmux, podman and the test images), then runs the whole suite. The broker itself is started and stopped by the integration tests' global set-up.
set -euo pipefail
cd "$(dirname "$0")/.."
# Three lanes side by side (about 75 s one after another here, mostly downloads and unpacking on
# one core): the packages and their build; the Python readers; the programs and jars, one after
# another (several use apt, which takes one lock). Then Kafka's, which uses both apt and the Python
# venv (librdkafka from the confluent-kafka wheel, fetched with the venv's pip: not while the Python
# lane upgrades that pip). The toolchain first: all lanes use it.
. scripts/toolchain.sh
mkdir -p .cache/setup
lane() { # lane NAME SCRIPT...: runs the scripts in order, their output in .cache/setup/NAME.log
  local name="$1" script
  shift
  for script in "$@"; do bash "$script" || return 1; done >".cache/setup/$name.log" 2>&1
}
# pyarrow, Polars, DuckDB, pyspark (Spark runs on the Java kafka/setup.sh installs)
lane python scripts/python/setup.sh & python=$!
# Redis, Apicurio Registry (runs on Java 21+), S3Proxy (Java 17), chromium and tmux (report page,
# terminal checks); podman and the local Kafka and Redis images, so the tests start them with
# testcontainers (when the engine cannot be prepared it says so and exits 0, and the tests run
# both on the host as above).
lane programs scripts/redis/setup.sh scripts/registry/setup.sh scripts/s3proxy/setup.sh \
  scripts/test-tools.sh scripts/containers/setup.sh & programs=$!
failed=()
bash scripts/setup.sh || failed+=(packages) # pnpm install and the build, here in the foreground
for setup in python:$python programs:$programs; do
  wait "${setup#*:}" || failed+=("${setup%%:*}")
  cat ".cache/setup/${setup%%:*}.log" >&2
done
# kcat and the Kafka broker's jars, once apt and the venv are free.
((${#failed[@]})) || bash scripts/kafka/setup.sh || failed+=(kafka)
if ((${#failed[@]})); then
  echo "set-up failed: ${failed[*]} (each lane's output above)" >&2
  exit 1
fi
# Tests, benches and examples are type-checked too (the package builds leave them out), linted, and
# no function is over 80 lines (long-functions.mjs names any that is). The four checks run side by
# side (about 35 s one after another here, mostly waiting on one core); each one's output is shown
# when it fails, and any failure stops the command before the tests.
checks=.cache/checks
rm -rf "$checks" && mkdir -p "$checks"
pnpm exec tsc -p tsconfig.test.json >"$checks/tsc.log" 2>&1 & tsc=$!
pnpm exec eslint . >"$checks/eslint.log" 2>&1 & eslint=$!
pnpm exec prettier --check . >"$checks/prettier.log" 2>&1 & prettier=$!
node scripts/checks/long-functions.mjs >"$checks/long-functions.log" 2>&1 & long=$!
failed=()
for check in tsc:$tsc eslint:$eslint prettier:$prettier long-functions:$long; do
  wait "${check#*:}" || { failed+=("${check%%:*}"); cat "$checks/${check%%:*}.log" >&2; }
done
if ((${#failed[@]})); then
  echo "checks failed: ${failed[*]}" >&2
  exit 1
fi
status=0
pnpm exec vitest run --reporter=default --reporter=json --outputFile.json=.cache/vitest-report.json "$@" || status=$?
# The 15 slowest files, then a closing line any CI reads: "N passed, N failed".
node scripts/test-summary.mjs .cache/vitest-report.json || true
exit $status
