#!/usr/bin/env bash
# Creates (or refreshes) .cache/duckdb-delta/, a Python venv with DuckDB 1.4.4 and its delta and
# httpfs extensions from PyPI (duckdb-delta-requirements.txt), for the Delta reader tests'
# `duckdb-delta` reader (test/python/read_duckdb_delta.py, run by read_dataset.py). Its own venv:
# the extensions are built for one DuckDB release, and the readers' .venv has DuckDB 2.x.
# Idempotent: pip runs only when the requirements changed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/.cache/duckdb-delta"
req="$here/duckdb-delta-requirements.txt"
stamp="$venv/.quoteflow-requirements"
python="${PYTHON:-python3}"
if [[ -f "$stamp" ]] && cmp -s "$req" "$stamp" && "$venv/bin/python" -c 'import duckdb' 2>/dev/null; then
  exit 0
fi
[[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"
echo "python: installing DuckDB's delta extension into $venv" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" >&2
cp "$req" "$stamp"
