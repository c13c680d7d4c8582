#!/bin/sh
# The test image's broker: single-node KRaft with scripts/kafka/broker-settings.properties (as broker.sh),
# listening on 9092 in the container and advertising 127.0.0.1:$KAFKA_ADVERTISED_PORT, the loopback
# port the host publishes it on (clients on the host reach it only through that address). The
# broker cannot reach that address from inside, so it talks to itself (transaction markers, the
# partition verification of transactional produce) on a listener of its own, INTERNAL, on 9094.
# Storage is formatted once, so a stopped and started container keeps its topics and offsets.
# The secured listeners (scripts/kafka/broker-security.properties) listen on 9095 (SASL_SSL), 9096
# (MTLS) and 9097 (WRONGNAME), advertised at the host ports in KAFKA_SASL_SSL_PORT, KAFKA_MTLS_PORT and
# KAFKA_WRONGNAME_PORT; their key material (scripts/kafka/tls.sh) is copied into /opt/kafka/tls
# when the container is created, never built into the image. SCRAM users are added at format time.
set -eu
port="${KAFKA_ADVERTISED_PORT:?KAFKA_ADVERTISED_PORT: the host port that publishes 9092}"
sport="${KAFKA_SASL_SSL_PORT:?KAFKA_SASL_SSL_PORT: the host port that publishes 9095}"
mport="${KAFKA_MTLS_PORT:?KAFKA_MTLS_PORT: the host port that publishes 9096}"
wport="${KAFKA_WRONGNAME_PORT:?KAFKA_WRONGNAME_PORT: the host port that publishes 9097}"
home=/opt/kafka
data=/var/lib/kafka/data
{
  cat <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:9093
listeners=PLAINTEXT://0.0.0.0:9092,INTERNAL://127.0.0.1:9094,CONTROLLER://127.0.0.1:9093,SASL_SSL://0.0.0.0:9095,MTLS://0.0.0.0:9096,WRONGNAME://0.0.0.0:9097
advertised.listeners=PLAINTEXT://127.0.0.1:$port,INTERNAL://127.0.0.1:9094,SASL_SSL://127.0.0.1:$sport,MTLS://127.0.0.1:$mport,WRONGNAME://127.0.0.1:$wport
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,MTLS:SSL,WRONGNAME:SSL
inter.broker.listener.name=INTERNAL
log.dirs=$data
PROPS
  cat "$home/broker-settings.properties"
  sh "$home/security-config.sh" properties "$home/tls"
} >"$home/server.properties"
# Same JVM flags as broker.sh: C1 only and one GC thread start a test broker about twice as fast.
set -- java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx768m} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
  -Djava.awt.headless=true -Dlog4j2.configurationFile="$home/log4j2.properties" -cp "$home/libs/*"
if [ ! -f "$data/meta.properties" ]; then
  # A Kafka Uuid: 16 random bytes, base64url, no padding, not starting with '-'.
  id=""
  while [ -z "$id" ] || [ "${id#-}" != "$id" ]; do
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
  done
  # shellcheck disable=SC2046 # one --add-scram MECHANISM=[name=U,password=P] pair per user, no spaces
  "$@" kafka.tools.StorageTool format -t "$id" -c "$home/server.properties" $(sh "$home/security-config.sh" scram-args)
fi
exec "$@" kafka.Kafka "$home/server.properties"
