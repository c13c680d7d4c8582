#!/usr/bin/env bash
# Everything the Kafka tests and benchmarks need, idempotent (safe to run again):
#   - kcat (Debian package), the independent client the tests read topics back with;
#   - the Apache Kafka broker's jars, fetched from Maven Central into .cache/kafka (scripts/kafka/broker.sh fetch).
# Needs Java 17+ and Maven for the broker (installed from Debian's packages when missing and apt-get exists).
set -euo pipefail
cd "$(dirname "$0")/../.."

as_root() {
  if [[ "$(id -u)" == 0 ]]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "kafka-setup: need root to run: $*" >&2
    return 1
  fi
}

missing=()
command -v kcat >/dev/null || missing+=(kcat)
command -v java >/dev/null || missing+=(openjdk-17-jre-headless)
command -v mvn >/dev/null || missing+=(maven)
if ((${#missing[@]} > 0)); then
  command -v apt-get >/dev/null || {
    echo "kafka-setup: please install: ${missing[*]}" >&2
    exit 1
  }
  echo "kafka-setup: installing ${missing[*]}" >&2
  as_root apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
bash scripts/kafka/broker.sh fetch
