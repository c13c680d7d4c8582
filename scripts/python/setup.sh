#!/usr/bin/env bash
# Creates (or refreshes) the Python virtualenv at the repository root, `.venv/`, with the readers the
# file-sink interop tests and the Parquet benchmark use: pyarrow, polars, duckdb, pytz, pyspark,
# deltalake, and confluent-kafka with its Avro deserializer (the schema registry tests) (PyPI;
# Spark runs on Java 17+, which scripts/kafka/setup.sh installs).
# Then Delta Lake's Spark jars (delta-jars.sh), S3A's (s3a-jars.sh), and DuckDB's delta extension in
# a venv of its own (duckdb-delta.sh). Idempotent and fast when already set up: it only
# calls pip when requirements.txt changed.
# Usage: scripts/python/setup.sh            (PYTHON=python3.12 scripts/python/setup.sh to choose)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/.venv"
req="$here/requirements.txt"
stamp="$venv/.quoteflow-requirements"
python="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/python" ]]; then
  echo "python: creating $venv with $("$python" --version 2>&1)" >&2
  "$python" -m venv "$venv"
fi
if [[ -f "$stamp" ]] && cmp -s "$req" "$stamp" && "$venv/bin/python" -c 'import pyarrow, polars, duckdb, pytz, pyspark, deltalake, fastavro, confluent_kafka.schema_registry.avro' 2>/dev/null; then
  bash "$here/delta-jars.sh"
  bash "$here/s3a-jars.sh"
  exec bash "$here/duckdb-delta.sh"
fi
echo "python: installing $(sed -e 's/#.*//' -e '/^\s*$/d' "$req" | tr -s ' \n' ' ')" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" >&2
cp "$req" "$stamp"
"$venv/bin/python" -c 'import pyarrow, polars, duckdb, pyspark, deltalake; print("python: pyarrow", pyarrow.__version__, "polars", polars.__version__, "duckdb", duckdb.__version__, "pyspark", pyspark.__version__, "deltalake", deltalake.__version__)' >&2
bash "$here/delta-jars.sh" # Delta Lake's Spark jars into .cache/delta-jars
bash "$here/s3a-jars.sh"   # Hadoop's S3A and the AWS SDK for Spark's s3a:// reads, into .cache/s3a-jars
bash "$here/duckdb-delta.sh" # DuckDB 1.4.4 with its delta extension (PyPI) in .cache/duckdb-delta
