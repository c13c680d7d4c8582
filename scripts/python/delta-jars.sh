#!/usr/bin/env bash
# Fetches Delta Lake's Spark jars from Maven Central into .cache/delta-jars/, for the interop tests'
# Spark session (test/python/read_dataset.py puts every jar there on its classpath):
# io.delta:delta-spark_4.1_2.13:4.3.1 and io.delta:delta-storage:4.3.1, each checked against Maven
# Central's SHA-1. Reading a Delta table needs no more than these two (delta-spark's other
# dependencies, the Delta kernel and Unity Catalog clients, serve features quoteflow's tables do
# not use, and their Jackson/Hadoop/Parquet versions would shadow Spark's own). Idempotent.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dest="$root/.cache/delta-jars"
central="https://repo1.maven.org/maven2/io/delta"
jars=(
  "delta-spark_4.1_2.13/4.3.1/delta-spark_4.1_2.13-4.3.1.jar"
  "delta-storage/4.3.1/delta-storage-4.3.1.jar"
)
mkdir -p "$dest"
for jar in "${jars[@]}"; do
  name="$(basename "$jar")"
  [[ -f "$dest/$name" ]] && continue
  echo "delta: fetching $name from Maven Central" >&2
  curl -fsSL --retry 3 -o "$dest/$name.part" "$central/$jar"
  want="$(curl -fsSL --retry 3 "$central/$jar.sha1" | cut -c1-40)"
  got="$(sha1sum "$dest/$name.part" | cut -c1-40)"
  if [[ "$want" != "$got" ]]; then
    rm -f "$dest/$name.part"
    echo "delta: $name: SHA-1 $got, Maven Central says $want" >&2
    exit 1
  fi
  mv "$dest/$name.part" "$dest/$name"
done
