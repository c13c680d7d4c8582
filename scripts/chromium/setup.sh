#!/usr/bin/env bash
# Installs Debian's chromium when it is missing (idempotent): the report tests open `quoteflow
# report`'s page in it, headless, through puppeteer-core (test/report.test.ts).
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  echo "chromium present: $(chromium --version 2>/dev/null | head -1)" >&2
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=600 update
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends chromium
echo "chromium installed: $(chromium --version 2>/dev/null | head -1)" >&2
