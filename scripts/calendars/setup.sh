#!/usr/bin/env bash
# Creates scripts/calendars/.venv with the pinned calendar sources (requirements.txt) from PyPI.
# Usage: scripts/calendars/setup.sh && scripts/calendars/.venv/bin/python scripts/calendars/generate.py
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
python="${PYTHON:-python3}"
[[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
