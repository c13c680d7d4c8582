#!/bin/sh
# The secured part of the test broker's configuration, shared by scripts/kafka/broker.sh (host) and
# scripts/containers/kafka-entrypoint.sh (image), from broker-security.properties and test-users.txt
# beside this script (POSIX sh: the image has no bash guarantee):
#   security-config.sh properties TLS_DIR   the properties, PLAIN users' JAAS line included
#   security-config.sh scram-args           --add-scram arguments of `kafka-storage format`
#   security-config.sh users-hash           a digest of the users, to tell a storage formatted with others
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
users="$here/test-users.txt"
entries() { grep -v '^\s*\(#.*\)\?$' "$users"; }
case "${1:-}" in
  properties)
    tls="${2:?TLS_DIR}"
    sed "s|@TLS_DIR@|$tls|g" "$here/broker-security.properties"
    printf '%s' 'listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required'
    entries | while read -r mechanism user password; do
      if [ "$mechanism" = PLAIN ]; then printf ' user_%s="%s"' "$user" "$password"; fi
    done
    printf ';\n'
    ;;
  scram-args)
    entries | while read -r mechanism user password; do
      case "$mechanism" in SCRAM-*) printf -- '--add-scram %s=[name=%s,password=%s]\n' "$mechanism" "$user" "$password" ;; esac
    done
    ;;
  users-hash) entries | cksum | cut -d' ' -f1 ;;
  *)
    echo "usage: $0 properties TLS_DIR | scram-args | users-hash" >&2
    exit 2
    ;;
esac
