#!/usr/bin/env bash
# Runs S3Proxy (fetched by setup.sh into .cache/s3proxy/) with the properties file PROPS, in the
# foreground until standard input closes (the test set-up, test/support/s3.ts, holds it open), then
# stops it: so the server never outlives the test run, however the run ended.
#   scripts/s3proxy/run.sh PROPS
# Environment: S3PROXY_VERSION (default 4.1.0), S3PROXY_JAVA (default: java on PATH; 17+).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
props="${1:?usage: $0 PROPS}"
version="${S3PROXY_VERSION:-4.1.0}"
jar="$root/.cache/s3proxy/s3proxy-$version-jar-with-dependencies.jar"
[[ -f "$jar" ]] || bash "$here/setup.sh"
# LOG_LEVEL: S3Proxy's logback level (its INFO lines are one per request).
"${S3PROXY_JAVA:-java}" -Xms32m -Xmx512m -XX:TieredStopAtLevel=1 -DLOG_LEVEL=warn \
  -jar "$jar" --properties "$props" </dev/null &
pid=$!
# Standard input is watched in the background, so that S3Proxy's own exit (a bad setting, a port
# taken) ends this script too, with its status.
cat <&0 >/dev/null &
watcher=$!
trap 'kill "$pid" "$watcher" 2>/dev/null; wait "$pid" 2>/dev/null; exit 0' TERM INT
status=0
wait -n "$pid" "$watcher" || status=$?
if kill -0 "$pid" 2>/dev/null; then
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  exit 0
fi
kill "$watcher" 2>/dev/null || true
echo "s3proxy: S3Proxy exited with status $status" >&2
exit "$status"
