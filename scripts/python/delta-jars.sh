#!/usr/bin/env bash
# Fetches Delta Lake's Spark jars from Maven Central into .cache/delta-jars/, for the interop tests'
# Spark session (test/python/read_dataset.py puts every jar there on its classpath):
# io.delta:delta-spark_4.1_2.13:4.3.1 and io.delta:delta-storage:4.3.1, each checked against Maven
# Central's SHA-1. Reading a Delta table needs no more than these two (delta-spark's other
# dependencies, the Delta kernel and Unity Catalog clients, serve features quoteflow's tables do
# not use, and their Jackson/Hadoop/Parquet versions would shadow Spark's own). Idempotent.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
. "$root/scripts/maven-central.sh"
jars=(
  "io/delta/delta-spark_4.1_2.13/4.3.1/delta-spark_4.1_2.13-4.3.1.jar"
  "io/delta/delta-storage/4.3.1/delta-storage-4.3.1.jar"
)
for jar in "${jars[@]}"; do
  LABEL=delta central_fetch "$jar" "$root/.cache/delta-jars/$(basename "$jar")"
done
