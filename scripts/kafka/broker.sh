#!/usr/bin/env bash
# A single-node Apache Kafka broker (KRaft, no ZooKeeper) on 127.0.0.1 for tests and benchmarks.
#
#   scripts/kafka/broker.sh fetch    download the broker's jars from Maven Central (once; cached)
#   scripts/kafka/broker.sh start    fetch if needed, format storage, start, wait until it serves;
#                                    prints the bootstrap address (HOST:PORT) on stdout
#   scripts/kafka/broker.sh stop     stop it cleanly (SIGTERM, then SIGKILL after 60 s)
#   scripts/kafka/broker.sh status   prints the bootstrap address and exits 0 if it is running
#
# Environment:
#   KAFKA_VERSION        Apache Kafka version to fetch (default 4.1.0; 3.9.1 passes the tests too;
#                        any 3.x/4.x on Maven Central whose broker runs on the installed Java 17)
#   KAFKA_CACHE_DIR      where jars are cached (default <repo>/.cache/kafka)
#   KAFKA_INSTANCE_DIR   one broker's config, data, log, pid and address (default
#                        $KAFKA_CACHE_DIR/instances/default); several instances may run at once
#   KAFKA_PORT           listener port (default: the one this instance used before, else a free one)
#   KAFKA_HEAP_OPTS      JVM heap (default -Xms256m -Xmx768m)
#   KAFKA_JVM_OPTS       other JVM flags (default -XX:+UseSerialGC -XX:TieredStopAtLevel=1: a test
#                        broker starts about twice as fast with the C1 compiler alone and one GC
#                        thread, and leaves the CPU to the tests)
#   KAFKA_START_TIMEOUT  seconds to wait for the broker to serve (default 180)
#   KAFKA_WATCH_PID      if set, the broker is stopped once that process has exited
#   KAFKA_TLS_DIR        the secured listeners' key material (default <repo>/.cache/kafka/tls, made
#                        by scripts/kafka/tls.sh on first start)
#
# An instance keeps its port and data across stop/start, so a client can ride out a restart.
# `start` on a running instance only prints its address. Files of an instance:
#   bootstrap   HOST:PORT, written once the broker serves (what tests read)
#   listeners   NAME=HOST:PORT of each secured listener (SASL_SSL, MTLS, WRONGNAME) and TLS_DIR=…,
#               written with bootstrap (scripts/kafka/broker-security.properties says what they are)
#   pid         the JVM's process id while it runs
#   server.log  the broker's log
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version="${KAFKA_VERSION:-4.1.0}"
cache="${KAFKA_CACHE_DIR:-$root/.cache/kafka}"
libs="$cache/$version/libs"
instance="${KAFKA_INSTANCE_DIR:-$cache/instances/default}"
timeout_s="${KAFKA_START_TIMEOUT:-180}"

log() { echo "kafka-broker: $*" >&2; }
die() {
  log "$*"
  exit 1
}

# Scala 2.13 is the only binary version Kafka 4.x ships; 3.x ships both, 2.13 is the default.
# Kafka 3.x logs through slf4j 1.7 + reload4j; Kafka 4.x through slf4j 2 + log4j2 (slf4j-api 2 is
# named explicitly: Maven's nearest-wins would otherwise pick a transitive 1.7 and log nothing).
logging_deps() {
  case "$version" in
    3.*)
      echo "org.slf4j:slf4j-reload4j:1.7.36"
      ;;
    *)
      echo "org.slf4j:slf4j-api:2.0.17"
      echo "org.apache.logging.log4j:log4j-slf4j2-impl:2.24.3"
      ;;
  esac
}

cmd_fetch() {
  if [[ -f "$libs/.complete" ]]; then
    return 0
  fi
  command -v mvn >/dev/null || die "mvn not found (apt-get install -y maven)"
  command -v java >/dev/null || die "java not found (Kafka $version needs Java 17: apt-get install -y openjdk-17-jre-headless)"
  mkdir -p "$cache"
  local work
  work="$(mktemp -d "$cache/fetch.XXXXXX")"
  # A throw-away pom naming the broker and a logging backend; Maven resolves the rest.
  local deps="" g a v
  while IFS=: read -r g a v; do
    deps+="    <dependency><groupId>$g</groupId><artifactId>$a</artifactId><version>$v</version></dependency>"$'\n'
  done < <(logging_deps)
  cat >"$work/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.quoteflow</groupId>
  <artifactId>kafka-test-broker</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$version</version></dependency>
$deps  </dependencies>
</project>
EOF
  log "fetching Apache Kafka $version jars from Maven Central into $libs"
  if ! mvn -B -q -f "$work/pom.xml" -Dmaven.repo.local="$cache/m2" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$work/libs" >"$work/mvn.log" 2>&1; then
    cat "$work/mvn.log" >&2
    die "maven could not fetch Kafka $version (see above)"
  fi
  mkdir -p "$(dirname "$libs")"
  rm -rf "$libs"
  mv "$work/libs" "$libs"
  touch "$libs/.complete"
  rm -rf "$work"
}

# Whether something accepts TCP connections on 127.0.0.1:$1.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A port below the kernel's ephemeral range: one inside it may be the local end of some
# outgoing connection (nothing listens there, yet the broker's bind fails: Address already in use).
free_port() {
  local p i low
  low="$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)"
  ((low > 12000)) || low=32768
  for i in $(seq 1 200); do
    p=$((10000 + (RANDOM * 32768 + RANDOM) % (low - 10000)))
    if ! port_open "$p"; then
      echo "$p"
      return 0
    fi
  done
  die "no free port found"
}

running_pid() {
  local pid
  [[ -f "$instance/pid" ]] || return 1
  pid="$(cat "$instance/pid")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

# The JVM command line, in the array `java_cmd`.
set_java_cmd() {
  local heap jvm
  # shellcheck disable=SC2206 # these hold several flags
  heap=(${KAFKA_HEAP_OPTS:--Xms256m -Xmx768m})
  # shellcheck disable=SC2206
  jvm=(${KAFKA_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1})
  java_cmd=(java "${heap[@]}" "${jvm[@]}" -Djava.awt.headless=true
    "-Dlog4j.configuration=file:$instance/log4j.properties"
    "-Dlog4j2.configurationFile=$instance/log4j2.properties"
    -cp "$libs/*")
}

write_config() {
  local port="$1" cport="$2" sport="$3" mport="$4" wport="$5" tls="$6"
  {
    cat <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport,SASL_SSL://127.0.0.1:$sport,MTLS://127.0.0.1:$mport,WRONGNAME://127.0.0.1:$wport
advertised.listeners=PLAINTEXT://127.0.0.1:$port,SASL_SSL://127.0.0.1:$sport,MTLS://127.0.0.1:$mport,WRONGNAME://127.0.0.1:$wport
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,MTLS:SSL,WRONGNAME:SSL
inter.broker.listener.name=PLAINTEXT
log.dirs=$instance/data
EOF
    cat "$here/broker-settings.properties"
    sh "$here/security-config.sh" properties "$tls"
  } >"$instance/server.properties"
  # Kafka 3.x (reload4j) and 4.x (log4j2): INFO to server.log via stdout redirection.
  cat >"$instance/log4j.properties" <<'EOF'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
EOF
  cat >"$instance/log4j2.properties" <<'EOF'
appender.out.type=Console
appender.out.name=out
appender.out.layout.type=PatternLayout
appender.out.layout.pattern=[%d] %p %m (%c)%n
rootLogger.level=INFO
rootLogger.appenderRef.out.ref=out
EOF
}

cluster_id() {
  # A Kafka Uuid: 16 random bytes, base64url without padding; not starting with '-' (CLI-safe).
  local id
  while :; do
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
    [[ "$id" != -* ]] && break
  done
  echo "$id"
}

cmd_start() {
  mkdir -p "$instance"
  # One start at a time per instance (parallel test workers may race to start the same one).
  exec 9>"$instance/.lock"
  flock 9
  local pid
  if pid="$(running_pid)" && [[ -f "$instance/bootstrap" ]]; then
    cat "$instance/bootstrap"
    return 0
  fi
  cmd_fetch
  local port tls
  tls="$(bash "$here/tls.sh" "${KAFKA_TLS_DIR:-$root/.cache/kafka/tls}")"
  port="${KAFKA_PORT:-$(cat "$instance/port" 2>/dev/null || true)}"
  if [[ -z "$port" ]] || { [[ -z "${KAFKA_PORT:-}" ]] && port_open "$port"; }; then port="$(free_port)"; fi
  echo "$port" >"$instance/port"
  # The controller's and the secured listeners' ports: kept across restarts too, each its own.
  local name p taken=" $port "
  local -A ports=()
  for name in controller-port sasl-ssl-port mtls-port wrongname-port; do
    p="$(cat "$instance/$name" 2>/dev/null || true)"
    while [[ -z "$p" ]] || port_open "$p" || [[ "$taken" == *" $p "* ]]; do p="$(free_port)"; done
    taken+="$p "
    ports[$name]="$p"
    echo "$p" >"$instance/$name"
  done
  rm -f "$instance/bootstrap"
  write_config "$port" "${ports[controller-port]}" "${ports[sasl-ssl-port]}" "${ports[mtls-port]}" \
    "${ports[wrongname-port]}" "$tls"
  set_java_cmd
  # SCRAM users are in the metadata log from format time: a storage formatted with other users
  # (or before there were any) is formatted again.
  local users scram
  users="$(sh "$here/security-config.sh" users-hash)"
  if [[ ! -f "$instance/data/meta.properties" || "$(cat "$instance/users-hash" 2>/dev/null)" != "$users" ]]; then
    log "formatting storage in $instance/data"
    rm -rf "$instance/data"
    mapfile -t scram < <(sh "$here/security-config.sh" scram-args | tr ' ' '\n')
    "${java_cmd[@]}" kafka.tools.StorageTool format -t "$(cluster_id)" -c "$instance/server.properties" \
      "${scram[@]}" >"$instance/format.log" 2>&1 || {
      cat "$instance/format.log" >&2
      die "formatting storage failed"
    }
    echo "$users" >"$instance/users-hash"
  fi
  log "starting Kafka $version on 127.0.0.1:$port (instance $instance)"
  # setsid: the broker outlives this script and is not hit by signals meant for its caller.
  setsid "${java_cmd[@]}" kafka.Kafka "$instance/server.properties" >>"$instance/server.log" 2>&1 </dev/null 9>&- &
  pid=$!
  echo "$pid" >"$instance/pid"
  if [[ -n "${KAFKA_WATCH_PID:-}" ]]; then
    # Stop the broker when the process that asked for it is gone (a test runner killed hard).
    setsid bash -c 'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 2; done; kill -TERM "$2" 2>/dev/null' \
      watch "$KAFKA_WATCH_PID" "$pid" </dev/null >/dev/null 2>&1 9>&- &
  fi
  local deadline=$((SECONDS + timeout_s))
  # Serving = the listener accepts connections and the server logged that start-up finished.
  until port_open "$port" && grep -q "Kafka Server started\|\[KafkaRaftServer nodeId=1\] Kafka Server started" "$instance/server.log"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 40 "$instance/server.log" >&2 || true
      die "the broker exited during start-up (log: $instance/server.log)"
    fi
    if ((SECONDS > deadline)); then
      tail -n 40 "$instance/server.log" >&2 || true
      kill -KILL "$pid" 2>/dev/null || true
      die "the broker did not serve within ${timeout_s}s (log: $instance/server.log)"
    fi
    sleep 0.25
  done
  printf 'SASL_SSL=127.0.0.1:%s\nMTLS=127.0.0.1:%s\nWRONGNAME=127.0.0.1:%s\nTLS_DIR=%s\n' \
    "${ports[sasl-ssl-port]}" "${ports[mtls-port]}" "${ports[wrongname-port]}" "$tls" >"$instance/listeners"
  echo "127.0.0.1:$port" >"$instance/bootstrap.tmp"
  mv "$instance/bootstrap.tmp" "$instance/bootstrap"
  log "serving on 127.0.0.1:$port"
  cat "$instance/bootstrap"
}

cmd_stop() {
  local pid
  if ! pid="$(running_pid)"; then
    rm -f "$instance/pid" "$instance/bootstrap" "$instance/listeners"
    return 0
  fi
  log "stopping broker (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  local i
  for i in $(seq 1 240); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "broker did not stop within 60 s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$instance/pid" "$instance/bootstrap" "$instance/listeners"
}

cmd_status() {
  if running_pid >/dev/null && [[ -f "$instance/bootstrap" ]]; then
    cat "$instance/bootstrap"
    return 0
  fi
  echo "not running" >&2
  return 1
}

case "${1:-}" in
  fetch) cmd_fetch ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *)
    echo "usage: $0 fetch|start|stop|status" >&2
    exit 2
    ;;
esac
