#!/usr/bin/env bash
# Everything the Kafka tests and benchmarks need, idempotent (safe to run again):
#   - kcat (Debian package), the independent client the tests read topics back with;
#   - the Apache Kafka broker's jars, fetched from Maven Central into .cache/kafka (scripts/kafka/broker.sh fetch).
#   - librdkafka 2.16 for kcat's SCRAM logins (from the confluent-kafka wheel, below); openssl for the
#     certificates of the secured listeners (scripts/kafka/tls.sh).
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
command -v openssl >/dev/null || missing+=(openssl) # scripts/kafka/tls.sh: the secured listeners' certificates
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
# A librdkafka new enough for SCRAM against Kafka 4.x, for kcat: Debian's 2.0.2 builds the SCRAM
# client-final nonce wrongly (fixed in librdkafka 2.6.1, confluentinc/librdkafka#4895) and Kafka 4
# checks it strictly (RFC 5802), so a SCRAM login of Debian's kcat is refused as "invalid
# credentials" while kafkajs and the Java client log in. The confluent-kafka wheel from PyPI
# (2.16.1, librdkafka 2.16) carries a self-contained librdkafka (OpenSSL linked in); its .so is kept in .cache/kafka/librdkafka
# as librdkafka.so.1, and tests run kcat with LD_LIBRARY_PATH there (test/support/kafka-secure.ts).
librdkafka_version=2.16.1
librdkafka_dir=.cache/kafka/librdkafka
if [[ ! -f "$librdkafka_dir/$librdkafka_version/librdkafka.so.1" ]]; then
  python="${PYTHON:-}"
  [[ -n "$python" ]] || { [[ -x .venv/bin/python ]] && python=.venv/bin/python; } || python=python3
  work="$(mktemp -d)"
  echo "kafka-setup: fetching librdkafka $librdkafka_version (the confluent-kafka wheel) for kcat's SCRAM" >&2
  "$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    "confluent-kafka==$librdkafka_version" -d "$work" >&2
  "$python" - "$work" "$librdkafka_dir/$librdkafka_version" <<'PY'
import os, sys, zipfile
work, out = sys.argv[1], sys.argv[2]
wheel = next(f for f in os.listdir(work) if f.endswith('.whl'))
with zipfile.ZipFile(os.path.join(work, wheel)) as z:
    name = next(n for n in z.namelist() if os.path.basename(n).startswith('librdkafka') and '.so' in n)
    os.makedirs(out, exist_ok=True)
    with z.open(name) as src, open(os.path.join(out, 'librdkafka.so.1.tmp'), 'wb') as dst:
        dst.write(src.read())
os.replace(os.path.join(out, 'librdkafka.so.1.tmp'), os.path.join(out, 'librdkafka.so.1'))
PY
  rm -rf "$work"
fi
