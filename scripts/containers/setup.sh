#!/usr/bin/env bash
# Prepares a container engine for the integration tests and builds their local images, so that
# test/support starts Kafka and Redis through testcontainers (QUOTEFLOW_TEST_ENGINE, README).
# Every step is skipped when already done, and says what it does on stderr:
#   1. podman from Debian's packages (when no Docker API answers already);
#   2. the sandbox workarounds of shared/notes/containers.md: the hugetlb controller moved off
#      cgroup v2 (crun refuses hybrid cgroups), a crun wrapper that drops process.rlimits (no
#      CAP_SYS_RESOURCE here) registered in /etc/containers/containers.conf;
#   3. `podman system service` on unix:///run/podman/podman.sock (the Docker API testcontainers uses);
#   4. images, built locally since no image registry is reachable: a Debian bookworm minbase root
#      filesystem (debootstrap from the apt mirror, tarball cached), then quoteflow-test-kafka (Java 17
#      + the Kafka jars from Maven Central) and quoteflow-test-redis (redis-server); an image is rebuilt
#      only when its inputs changed (label dev.quoteflow.inputs).
# This script never fails the build: when the engine cannot be prepared it says why and exits 0,
# and the tests run Kafka and Redis on the host instead (their default when no Docker API answers).
#
# Environment:
#   QUOTEFLOW_TEST_ENGINE=host        skip everything (the tests will not use containers)
#   QUOTEFLOW_CONTAINERS_CACHE        where the rootfs tarball is kept (default ~/.cache/quoteflow/containers)
#   QUOTEFLOW_CONTAINER_CLI           podman (default) or docker: which CLI builds the images
#   QUOTEFLOW_BASE_IMAGE              base image to build on instead of the debootstrap one
#                                     (e.g. debian:bookworm-slim where a registry is reachable)
#   KAFKA_VERSION                     Kafka version of the image (default 4.1.0, as scripts/kafka)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

log() { echo "containers-setup: $*" >&2; }

if [[ "${1:-}" != --inner ]]; then
  if [[ "${QUOTEFLOW_TEST_ENGINE:-}" == host ]]; then
    log "QUOTEFLOW_TEST_ENGINE=host: skipped (Kafka and Redis run on the host)"
    exit 0
  fi
  start=$SECONDS
  # A separate process, so that `set -e` holds inside while a failure here stays a warning.
  if bash "$0" --inner; then
    log "ready in $((SECONDS - start)) s"
  else
    log "the container engine could not be prepared (see above): the tests will run Kafka and Redis on the host"
  fi
  exit 0
fi

socket_path=/run/podman/podman.sock
cli="${QUOTEFLOW_CONTAINER_CLI:-podman}"
cache="${QUOTEFLOW_CONTAINERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/quoteflow/containers}"
kafka_version="${KAFKA_VERSION:-4.1.0}"
base_image="localhost/quoteflow-bookworm-minbase:latest"
# The Kafka image's tag names its configuration (test/support/test-engine.ts computes the same), so
# checkouts of different versions on one machine never run each other's broker settings.
kafka_config_hash="$(cat "$here/kafka.Containerfile" "$here/kafka-entrypoint.sh" "$here/log4j2.properties" \
  "$root/scripts/kafka/broker-settings.properties" "$root/scripts/kafka/broker-security.properties" \
  "$root/scripts/kafka/security-config.sh" "$root/scripts/kafka/test-users.txt" | sha256sum | cut -c1-12)"
kafka_image="localhost/quoteflow-test-kafka:$kafka_version-$kafka_config_hash"
redis_image="localhost/quoteflow-test-redis:latest"

as_root() {
  if [[ "$(id -u)" == 0 ]]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root to run: $*"
    return 1
  fi
}

# Whether the Docker API answers on unix socket $1.
api_answers() { [[ -S "$1" ]] && curl -sf --max-time 3 --unix-socket "$1" http://d/_ping >/dev/null 2>&1; }

install_packages() {
  local missing=() p
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  ((${#missing[@]} == 0)) && return 0
  log "installing ${missing[*]} from Debian's packages (log: $cache/apt.log)"
  mkdir -p "$cache"
  if ! { as_root apt-get update -qq && DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}"; } \
    >"$cache/apt.log" 2>&1; then
    tail -n 20 "$cache/apt.log" >&2
    log "apt-get could not install ${missing[*]}"
    return 1
  fi
}

prepare_cgroups() {
  # crun refuses "hybrid" cgroups while cgroup v2 still holds a controller; moving hugetlb (the one
  # this sandbox leaves there) to a v1 mount empties it.
  local unified=/sys/fs/cgroup/unified/cgroup.controllers controllers
  [[ -f "$unified" ]] || return 0
  controllers="$(cat "$unified")"
  [[ -z "$controllers" ]] && return 0
  if [[ "$controllers" != hugetlb ]]; then
    log "cgroup v2 holds controllers ($controllers): only hugetlb is known to move; trying anyway"
  fi
  log "moving the hugetlb cgroup controller to a v1 mount (/sys/fs/cgroup/hugetlb)"
  as_root mkdir -p /sys/fs/cgroup/hugetlb
  as_root mount -t cgroup -o hugetlb none /sys/fs/cgroup/hugetlb
  controllers="$(cat "$unified")"
  [[ -z "$controllers" ]] || {
    log "cgroup v2 still holds: $controllers"
    return 1
  }
}

prepare_runtime() {
  local wrapper=/usr/local/libexec/crun-norlimit conf=/etc/containers/containers.conf
  if ! cmp -s "$here/crun-norlimit" "$wrapper"; then
    log "installing $wrapper (crun without process.rlimits: setrlimit needs CAP_SYS_RESOURCE)"
    as_root install -D -m 755 "$here/crun-norlimit" "$wrapper"
  fi
  if [[ -f "$conf" ]] && grep -q crun-norlimit "$conf"; then return 0; fi
  if [[ -f "$conf" ]] && grep -qv '^\s*\(#.*\)\?$' "$conf"; then
    log "$conf has settings of its own; add by hand: [containers] default_ulimits = [] and [engine.runtimes] crun = [\"$wrapper\"]"
    return 1
  fi
  log "writing $conf (crun through $wrapper, no default ulimits)"
  as_root mkdir -p /etc/containers
  printf '%s\n' '# quoteflow scripts/containers/setup.sh: this sandbox cannot set rlimits.' \
    '[containers]' 'default_ulimits = []' '' '[engine.runtimes]' "crun = [\"$wrapper\"]" |
    as_root tee "$conf" >/dev/null
}

# A service whose working directory is gone (it was started in a clone that was deleted since)
# answers, but every container it starts fails: conmon inherits the directory ("write child:
# broken pipe"). Such a service is stopped and started anew.
service_cwd_gone() {
  local pid
  for pid in $(pgrep -f "podman system service .*unix://$socket_path" || true); do
    [[ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" == *" (deleted)" ]] && return 0
  done
  return 1
}

start_service() {
  if service_cwd_gone; then
    log "the podman service runs in a deleted directory: restarting it"
    as_root pkill -f "podman system service .*unix://$socket_path" || true
    sleep 1
  fi
  api_answers "$socket_path" && return 0
  log "starting podman system service on unix://$socket_path"
  as_root mkdir -p "$(dirname "$socket_path")" "$cache"
  # setsid: the service outlives this script and the test run (later runs reuse it), so it runs
  # from / and not from this checkout, which may be deleted before it stops.
  (cd / && setsid nohup podman system service --time=0 "unix://$socket_path" >>"$cache/podman-service.log" 2>&1 </dev/null &)
  local i
  for i in $(seq 1 100); do
    api_answers "$socket_path" && return 0
    sleep 0.1
  done
  tail -n 20 "$cache/podman-service.log" >&2 || true
  log "the podman service did not answer on $socket_path"
  return 1
}

image_label() { "$cli" image inspect --format '{{index .Config.Labels "dev.quoteflow.inputs"}}' "$1" 2>/dev/null || true; }

build_base() {
  if [[ -n "${QUOTEFLOW_BASE_IMAGE:-}" ]]; then
    base_image="$QUOTEFLOW_BASE_IMAGE"
    return 0
  fi
  "$cli" image inspect "$base_image" >/dev/null 2>&1 && return 0
  local tarball="$cache/bookworm-minbase.tar"
  if [[ ! -f "$tarball" ]]; then
    install_packages debootstrap
    local mirror dir
    mirror="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
    [[ -n "$mirror" ]] || mirror="$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)"
    mirror="${mirror:-http://deb.debian.org/debian}"
    mkdir -p "$cache"
    dir="$(mktemp -d "$cache/rootfs.XXXXXX")"
    log "debootstrap --variant=minbase bookworm from $mirror (a few minutes; the tarball is cached in $cache)"
    if ! as_root debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$cache/debootstrap.log" 2>&1; then
      tail -n 20 "$cache/debootstrap.log" >&2
      as_root rm -rf "$dir"
      log "debootstrap failed (log: $cache/debootstrap.log)"
      return 1
    fi
    # The .debs debootstrap downloaded are not part of the system (about a third of its size).
    as_root tar -C "$dir" --exclude='./var/cache/apt/archives/*.deb' -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    as_root rm -rf "$dir"
  fi
  log "importing $tarball as $base_image"
  "$cli" import "$tarball" "$base_image" >/dev/null
}

# build IMAGE CONTAINERFILE [FILE...]: rebuilds when the Containerfile, the files or the base changed.
build() {
  local image="$1" containerfile="$2"
  shift 2
  local inputs
  inputs="$({
    "$cli" image inspect --format '{{.Id}}' "$base_image"
    cat "$containerfile"
    for f in "$@"; do [[ -d "$f" ]] && (cd "$f" && ls -l) || cat "$f"; done
  } | sha256sum | cut -c1-16)"
  if [[ "$(image_label "$image")" == "$inputs" ]]; then
    log "$image is up to date"
    return 0
  fi
  local context
  context="$(mktemp -d "$cache/context.XXXXXX")"
  (($# == 0)) || cp -r "$@" "$context/"
  log "building $image"
  # --network host: apt-get inside the build reaches the mirror the way the host does.
  if ! "$cli" build -q --network host --build-arg "BASE=$base_image" --label "dev.quoteflow.inputs=$inputs" \
    -t "$image" -f "$containerfile" "$context" >/dev/null; then
    rm -rf "$context"
    log "building $image failed"
    return 1
  fi
  rm -rf "$context"
}

mkdir -p "$cache"
# Work directories an interrupted run left behind (this script is not run twice at once).
as_root rm -rf "$cache"/context.* "$cache"/rootfs.*
if [[ "$cli" == docker ]]; then
  docker info >/dev/null 2>&1 || {
    log "QUOTEFLOW_CONTAINER_CLI=docker but docker info fails"
    exit 1
  }
  log "using the Docker engine that answers (docker info)"
else
  if api_answers "$socket_path" && command -v podman >/dev/null && ! service_cwd_gone; then
    log "podman answers on $socket_path"
  else
    command -v apt-get >/dev/null || {
      log "podman is missing and there is no apt-get: install podman (or Docker), then run this again"
      exit 1
    }
    install_packages podman jq
    prepare_cgroups
    prepare_runtime
    start_service
  fi
fi
build_base
# The Kafka jars come the way the host broker gets them (scripts/kafka/broker.sh fetch, cached).
bash "$root/scripts/kafka/broker.sh" fetch
libs="${KAFKA_CACHE_DIR:-$root/.cache/kafka}/$kafka_version/libs"
build "$kafka_image" "$here/kafka.Containerfile" "$libs" "$here/kafka-entrypoint.sh" "$here/log4j2.properties" \
  "$root/scripts/kafka/broker-settings.properties" "$root/scripts/kafka/broker-security.properties" \
  "$root/scripts/kafka/security-config.sh" "$root/scripts/kafka/test-users.txt"
build "$redis_image" "$here/redis.Containerfile"
log "images: $kafka_image $redis_image"
