#!/usr/bin/env bash
# The test schema registry: Apicurio Registry 3.x (Maven Central io.apicurio:apicurio-registry-app,
# tar.gz classifier "all": a Quarkus app), in-memory storage (the default H2 in memory), on 127.0.0.1.
#   scripts/registry/registry.sh fetch   download and unpack it into .cache/registry (once; cached)
#   scripts/registry/registry.sh java    print the java (21+) it runs on
#   scripts/registry/registry.sh run     fetch if needed, run it in the foreground until standard input
#                                        closes (the test set-up holds it open), then stop it.
# run's settings come from the environment (Quarkus reads QUARKUS_* variables; the test set-up
# passes the embedded users' passwords that way, never on a command line):
#   REGISTRY_HTTP_PORT, REGISTRY_MANAGEMENT_PORT  (default 0: any free port; the log says which)
# Environment: APICURIO_VERSION (default 3.3.3), REGISTRY_JAVA (a java 21+ to use).
set -euo pipefail
cd "$(dirname "$0")/../.."
version="${APICURIO_VERSION:-3.3.3}"
cache=".cache/registry"
app="$cache/apicurio-registry-$version"

log() { echo "registry: $*" >&2; }
die() {
  log "$*"
  exit 1
}

java_major() { "$1" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }

find_java() {
  local candidates=()
  [[ -n "${REGISTRY_JAVA:-}" ]] && candidates+=("$REGISTRY_JAVA")
  command -v java >/dev/null && candidates+=("$(command -v java)")
  # Beside the default Java 17: a Temurin (or any) 21+ JDK under /usr/lib/jvm or /opt.
  for j in /usr/lib/jvm/*/bin/java /opt/*/bin/java /opt/*/*/bin/java; do [[ -x "$j" ]] && candidates+=("$j"); done
  for j in "${candidates[@]}"; do
    local major
    major="$(java_major "$j")"
    if [[ -n "$major" && "$major" -ge 21 ]]; then
      echo "$j"
      return 0
    fi
  done
  die "Apicurio Registry 3 needs Java 21+; none found (set REGISTRY_JAVA, or install one under /usr/lib/jvm)"
}

cmd_fetch() {
  [[ -f "$app/quarkus-run.jar" ]] && return 0
  command -v mvn >/dev/null || die "mvn not found (scripts/kafka/setup.sh installs it)"
  mkdir -p "$cache"
  local work
  work="$(mktemp -d "$cache/fetch.XXXXXX")"
  log "fetching Apicurio Registry $version from Maven Central into $app"
  if ! mvn -B -q dependency:copy -Dartifact="io.apicurio:apicurio-registry-app:$version:tar.gz:all" \
    -DoutputDirectory="$work" -Dmaven.repo.local="$cache/m2" >"$work/mvn.log" 2>&1; then
    cat "$work/mvn.log" >&2
    die "maven could not fetch Apicurio Registry $version (see above)"
  fi
  mkdir -p "$work/app"
  tar xzf "$work/apicurio-registry-app-$version-all.tar.gz" -C "$work/app"
  [[ -f "$work/app/quarkus-run.jar" ]] || die "the Apicurio archive has no quarkus-run.jar"
  rm -rf "$app"
  mv "$work/app" "$app"
  # The archive is unpacked: keep neither it nor the local Maven repository's copy.
  rm -rf "$work" "$cache/m2/io/apicurio"
}

cmd_run() {
  cmd_fetch
  local java
  java="$(find_java)"
  "$java" -Xms64m -Xmx512m -XX:TieredStopAtLevel=1 \
    -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="${REGISTRY_HTTP_PORT:-0}" \
    -Dquarkus.management.host=127.0.0.1 -Dquarkus.management.port="${REGISTRY_MANAGEMENT_PORT:-0}" \
    -jar "$app/quarkus-run.jar" </dev/null &
  local pid=$!
  # Stop it when our standard input closes (the test run ended, however it ended) or on a signal.
  trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; exit 0' TERM INT
  cat >/dev/null || true
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

case "${1:-}" in
  fetch) cmd_fetch ;;
  java) find_java ;;
  run) cmd_run ;;
  *) die "usage: $0 fetch|java|run" ;;
esac
