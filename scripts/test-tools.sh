#!/usr/bin/env bash
# Installs the Debian packages the tests drive, when missing (idempotent): chromium (the report
# page opened headless through puppeteer-core, test/report.test.ts) and tmux (the CLI's progress
# and logs on a real terminal, test/cli-terminal.test.ts).
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
if ((${#missing[@]} == 0)); then
  echo "test tools present: $(chromium --version 2>/dev/null | head -1), $(tmux -V)" >&2
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=600 update
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}"
echo "test tools installed: ${missing[*]}" >&2
