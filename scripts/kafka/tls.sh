#!/usr/bin/env bash
# Key material of the test broker's secured listeners, made with openssl into DIR (default
# <repo>/.cache/kafka/tls; never committed), once: later calls find it and do nothing.
#
#   ca.pem / ca.key            the test CA (what clients pass as ssl.ca.location)
#   broker.pem                 the broker's key (PKCS#8) and certificate, for IP 127.0.0.1, signed by the CA
#   wrongname.pem              key and certificate for wrong-name.invalid (the WRONGNAME listener), same CA
#   client.pem / client.key    an mTLS client certificate (CN=qf-client, a super user) and its key,
#                              encrypted with the password in client.key.password
#   other-ca.pem               a second CA that signed nothing the broker shows (an untrusted CA)
#
# Kafka reads the PEM files directly (ssl.keystore.type=PEM), so no keytool and no JKS.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="${1:-${KAFKA_TLS_DIR:-$root/.cache/kafka/tls}}"
mkdir -p "$dir"
exec 8>"$dir/.lock"
flock 8
[[ -f "$dir/.complete" ]] && {
  echo "$dir"
  exit 0
}
command -v openssl >/dev/null || {
  echo "kafka-tls: openssl not found (apt-get install -y openssl)" >&2
  exit 1
}
work="$(mktemp -d "$dir/work.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work"
days=3650
ca() { # NAME SUBJECT
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.pem" -days "$days" -subj "$2" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
}
leaf() { # NAME SUBJECT EXTENSIONS
  openssl req -newkey rsa:2048 -nodes -keyout "$1.raw.key" -out "$1.csr" -subj "$2" 2>/dev/null
  printf '%s\n' "$3" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days "$days" -out "$1.crt" \
    -extfile "$1.ext" 2>/dev/null
  openssl pkcs8 -topk8 -nocrypt -in "$1.raw.key" -out "$1.p8.key"
}
ca ca "/CN=quoteflow test CA"
ca other-ca "/CN=quoteflow other CA"
leaf broker "/CN=127.0.0.1" $'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth'
leaf wrongname "/CN=wrong-name.invalid" $'subjectAltName=DNS:wrong-name.invalid\nextendedKeyUsage=serverAuth'
leaf client "/CN=qf-client" 'extendedKeyUsage=clientAuth'
cat broker.p8.key broker.crt ca.pem >broker.pem
cat wrongname.p8.key wrongname.crt ca.pem >wrongname.pem
password="client-key-Pw-$(openssl rand -hex 4)"
printf '%s' "$password" >client.key.password
openssl pkcs8 -topk8 -v2 aes-256-cbc -in client.raw.key -out client.key -passout "pass:$password"
cp client.crt client.pem
chmod 600 ./*.key ./*.pem client.key.password
# The broker in a container runs as another user than the files' owner: it must read them.
chmod 644 ca.pem broker.pem wrongname.pem
mv ca.pem ca.key other-ca.pem broker.pem wrongname.pem client.pem client.key client.key.password "$dir/"
touch "$dir/.complete"
echo "$dir"
