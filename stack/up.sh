#!/usr/bin/env bash
# make up: start the local stack (ClickHouse, Kafka, Flink JobManager + TaskManager, Telegraf)
# as plain processes with state and logs under .stack/, and wait until each one answers.
# A server that is already running is left alone, so a second `make up` does nothing.
. "$(dirname "$0")/lib.sh"

# --- configuration checks: fail early with what to fix ---------------------------------------
check_config() {
  local seen="" var val i
  for var in KAFKA_BROKERS FLINK_TASKMANAGERS KAFKA_REPLICATION_FACTOR KAFKA_MIN_INSYNC_REPLICAS; do
    [[ "${!var}" =~ ^[1-9][0-9]?$ ]] || die "$var='${!var}' in $STACK_ENV is not a count (1-99): fix it there"
  done
  [ "$KAFKA_REPLICATION_FACTOR" -le "$KAFKA_BROKERS" ] \
    || die "KAFKA_REPLICATION_FACTOR=$KAFKA_REPLICATION_FACTOR in $STACK_ENV exceeds KAFKA_BROKERS=$KAFKA_BROKERS"
  [ "$KAFKA_MIN_INSYNC_REPLICAS" -le "$KAFKA_REPLICATION_FACTOR" ] \
    || die "KAFKA_MIN_INSYNC_REPLICAS=$KAFKA_MIN_INSYNC_REPLICAS in $STACK_ENV exceeds KAFKA_REPLICATION_FACTOR=$KAFKA_REPLICATION_FACTOR"
  # Every port of every member: the base ports of stack.env, then those of members 1.. (their
  # names say which member), so two members never share one.
  local ports=() names=()
  for var in KAFKA_PORT KAFKA_CONTROLLER_PORT FLINK_REST_PORT FLINK_RPC_PORT FLINK_BLOB_PORT CLICKHOUSE_HTTP_PORT \
             CLICKHOUSE_TCP_PORT CLICKHOUSE_INTERSERVER_PORT ${ZOOKEEPER_PORT:+ZOOKEEPER_PORT}; do
    val="${!var:-}"
    [[ "$val" =~ ^[0-9]+$ ]] && [ "$val" -ge 1 ] && [ "$val" -le 65535 ] \
      || die "$var='$val' in $STACK_ENV is not a port number (1-65535): fix it there"
    ports+=("$val"); names+=("$var")
  done
  for ((i = 1; i < KAFKA_BROKERS; i++)); do
    ports+=("$(kafka_port "$i")" "$(kafka_controller_port "$i")")
    names+=("KAFKA_PORT+$((2 * i)) (kafka-$i)" "KAFKA_CONTROLLER_PORT+$((2 * i)) (kafka-$i)")
  done
  for ((i = 1; i < ${CLICKHOUSE_SHARDS:-1} * ${CLICKHOUSE_REPLICAS:-1}; i++)); do
    for var in CLICKHOUSE_HTTP_PORT CLICKHOUSE_TCP_PORT CLICKHOUSE_INTERSERVER_PORT; do
      ports+=("$((${!var} + i))"); names+=("$var+$i (clickhouse-$i)")
    done
  done
  for ((i = 0; i < ${#ports[@]}; i++)); do
    [ "${ports[i]}" -le 65535 ] || die "${names[i]}=${ports[i]} in $STACK_ENV is not a port number (1-65535): lower the base port"
    case " $seen " in *" ${ports[i]} "*)
      die "${names[i]}=${ports[i]} in $STACK_ENV is used twice: give each server its own port";; esac
    seen="$seen ${ports[i]}"
  done
  CLICKHOUSE_NICE="${CLICKHOUSE_NICE:-0}"
  [[ "$CLICKHOUSE_NICE" =~ ^[0-9]+$ ]] && [ "$CLICKHOUSE_NICE" -le 19 ] \
    || die "CLICKHOUSE_NICE='$CLICKHOUSE_NICE' in $STACK_ENV is not a nice level (0-19): fix it there"
}

# The programs and jars the servers need (not for --check and --render).
check_tools() {
  command -v "$JAVA" >/dev/null 2>&1 \
    || die "Java not found ('$JAVA'): install a JDK 17 (apt-get install openjdk-17-jdk-headless, or make setup) or set JAVA=/path/to/java"
  local jv
  jv="$("$JAVA" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}')"
  [ "${jv%%.*}" -ge 17 ] 2>/dev/null || die "Java $jv at '$(command -v "$JAVA")' is too old: Kafka 4 and Flink 2 need Java 17 or newer"
  [ -x "$CLICKHOUSE_SERVER" ] || die "ClickHouse server not found at $CLICKHOUSE_SERVER: run make setup (Debian package clickhouse-server)"
  ls "$LIB_DIR"/kafka/kafka_2.13-*.jar >/dev/null 2>&1 || die "Kafka jars missing in $LIB_DIR/kafka: run make setup"
  ls "$LIB_DIR"/flink/flink-runtime-*.jar >/dev/null 2>&1 || die "Flink jars missing in $LIB_DIR/flink: run make setup"
}

# Fill @VAR@ in a template from the environment (stack.env plus STACK_DIR and the secrets'
# variables below). The result is 0600: some hold a password.
render() {
  local in="$1" out="$2" line
  mkdir -p "$(dirname "$out")"
  (umask 077; rm -f "$out.tmp"; cp "$in" "$out.tmp")
  for var in $(grep -o '@[A-Z_][A-Z_]*@' "$in" | sort -u | tr -d @); do
    [ -n "${!var:-}" ] || die "$in uses @$var@ but $STACK_ENV does not set $var"
    sed -i "s|@$var@|${!var}|g" "$out.tmp"
  done
  mv "$out.tmp" "$out"
}

# start NAME PORT CMD...: start a server in its own session, log to .stack/logs/NAME.log
start() {
  local name="$1" port="$2"; shift 2
  if pid="$(running_pid "$name")"; then
    say "$name already running (pid $pid)"; return 0
  fi
  if [ "$port" != - ] && port_open "$port"; then
    die "port $port for $name is already taken by another program: stop it or change the port in $STACK_ENV"
  fi
  setsid nohup "$@" >> "$LOG_DIR/$name.log" 2>&1 < /dev/null &
  echo $! > "$(pidfile "$name")"
  say "started $name (pid $!)"
}

# wait_for NAME SECONDS: bounded wait until the server answers; on timeout, show its log.
wait_for() {
  local name="$1" limit="$2" t=0
  until healthy "$name"; do
    if ! running_pid "$name" >/dev/null; then
      echo "stack: error: $name exited while starting. Last lines of $LOG_DIR/$name.log:" >&2
      tail -n 25 "$LOG_DIR/$name.log" >&2 || true
      exit 1
    fi
    if [ "$t" -ge "$limit" ]; then
      echo "stack: error: $name did not answer within ${limit}s. Last lines of $LOG_DIR/$name.log:" >&2
      tail -n 25 "$LOG_DIR/$name.log" >&2 || true
      exit 1
    fi
    sleep 1; t=$((t + 1))
  done
  say "$name is up"
}

start_clickhouse() {
  local d="$STACK_DIR/clickhouse"
  mkdir -p "$d/data" "$d/tmp" "$d/user_files" "$d/format_schemas"
  render "$STACK_SRC/clickhouse/config.xml.in" "$d/config.xml"
  cp "$STACK_SRC/clickhouse/users.xml" "$d/users.xml"
  start clickhouse "$CLICKHOUSE_HTTP_PORT" nice -n "$CLICKHOUSE_NICE" "$CLICKHOUSE_SERVER" --config-file="$d/config.xml"
}

# The CA, Kafka's certificate and the principals' client files and passwords, made once; what
# the templates need of them.
make_secrets() {
  "$STACK_SRC/kafka/make-secrets.sh" "$SECRETS_DIR" "$SECRETS_DIR/ca.pem" "IP:$STACK_HOST" IP:127.0.0.1 DNS:localhost \
    || die "making Kafka's certificates and passwords in $SECRETS_DIR failed (needs openssl)"
  KAFKA_SECRETS="$SECRETS_DIR"
  KAFKA_TELEGRAF_PASSWORD="$(client_prop telegraf sasl.password)"
  KAFKA_CLICKHOUSE_PASSWORD="$(client_prop clickhouse sasl.password)"
}

# The cluster id every member's store is formatted with: member 0's (a store from before the
# multi-node profile keeps its own), made once and kept in kafka/cluster-id.
kafka_cluster_id() {
  local f="$STACK_DIR/kafka/cluster-id" meta="$STACK_DIR/kafka/data/meta.properties"
  if [ ! -s "$f" ]; then
    mkdir -p "$STACK_DIR/kafka"
    if [ -f "$meta" ]; then
      sed -n 's/^cluster.id=//p' "$meta" > "$f"
    else
      "$JAVA" -cp "$(kafka_cp)" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1 > "$f"
    fi
  fi
  [ -s "$f" ] || die "no Kafka cluster id in $f"
  cat "$f"
}

# The controller quorum (every member), as node.id@host:port; kept in kafka/voters when member
# 0's store is formatted: a store of one quorum does not join another, so a STACK_DIR keeps its
# number of brokers (another KAFKA_BROKERS takes another STACK_DIR).
kafka_voters() {
  local i out=""
  for ((i = 0; i < KAFKA_BROKERS; i++)); do out="$out${out:+,}$((i + 1))@$STACK_HOST:$(kafka_controller_port "$i")"; done
  echo "$out"
}

check_kafka_voters() {
  local f="$STACK_DIR/kafka/voters" want have
  want="$(kafka_voters)"
  if [ -f "$f" ]; then
    have="$(cat "$f")"
  elif [ -f "$STACK_DIR/kafka/data/meta.properties" ]; then
    have="1@$STACK_HOST:$KAFKA_CONTROLLER_PORT" # a store from before the multi-node profile
  else
    have="$want"
  fi
  [ "$have" = "$want" ] || die "$STACK_DIR holds a Kafka whose controller quorum is $have, not $want (KAFKA_BROKERS=$KAFKA_BROKERS): use another STACK_DIR for this profile, or make down and remove $STACK_DIR/kafka*"
  mkdir -p "$STACK_DIR/kafka"
  echo "$want" > "$f"
}

# render_kafka_node I: member I's configuration as $STACK_DIR/<name>/server.properties.new
render_kafka_node() {
  local i="$1" d
  d="$STACK_DIR/$(member kafka "$i")"
  KAFKA_NODE_ID=$((i + 1)) KAFKA_NODE_DIR="$d"
  KAFKA_NODE_PORT="$(kafka_port "$i")" KAFKA_NODE_CONTROLLER_PORT="$(kafka_controller_port "$i")"
  KAFKA_VOTERS="$(kafka_voters)"
  render "$STACK_SRC/kafka/server.properties.in" "$d/server.properties.new"
  if [ "$KAFKA_BROKERS" -gt 1 ]; then
    echo "min.insync.replicas=$KAFKA_MIN_INSYNC_REPLICAS" >> "$d/server.properties.new"
  fi
  cat "$SECRETS_DIR/server-sasl.properties" >> "$d/server.properties.new"
}

# start_kafka_node I: render member I's configuration, format its store once, start it.
start_kafka_node() {
  local i="$1" name d cp
  name="$(member kafka "$i")"
  d="$STACK_DIR/$name"
  cp="$(kafka_cp)"
  render_kafka_node "$i"
  if running_pid "$name" >/dev/null && ! cmp -s <(grep -v '^#' "$d/server.properties.new") <(grep -v '^#' "$d/server.properties"); then
    rm -f "$d/server.properties.new"
    die "the running $name has an older configuration (e.g. from before authentication): make down && make up"
  fi
  mv "$d/server.properties.new" "$d/server.properties"
  if [ ! -f "$d/data/meta.properties" ]; then
    "$JAVA" -cp "$cp" -Dlog4j2.configurationFile="$STACK_SRC/kafka/log4j2.properties" -Dkafka.logs.dir="$LOG_DIR" -Dkafka.log.name="$name" \
      kafka.tools.StorageTool format -t "$(kafka_cluster_id)" -c "$d/server.properties" >> "$LOG_DIR/$name.log" 2>&1 \
      || die "formatting $name's storage failed; see $LOG_DIR/$name.log"
  fi
  start "$name" "$KAFKA_NODE_PORT" "$JAVA" -Xms"$KAFKA_HEAP" -Xmx"$KAFKA_HEAP" -XX:+UseG1GC \
    -Dlog4j2.configurationFile="$STACK_SRC/kafka/log4j2.properties" -Dkafka.logs.dir="$LOG_DIR" -Dkafka.log.name="$name" \
    -cp "$cp" kafka.Kafka "$d/server.properties"
}

start_kafka() {
  local i
  check_kafka_voters
  kafka_cluster_id > /dev/null
  rm -f "$RUN_DIR/kafka.topics-ok"
  for ((i = 0; i < KAFKA_BROKERS; i++)); do start_kafka_node "$i"; done
}

create_topics() {
  # A quorum of several nodes elects its leader and registers its brokers before a port opens:
  # 60 s a node.
  local t=0 name port limit=$((60 * KAFKA_BROKERS))
  for name in $(members kafka "$KAFKA_BROKERS"); do
    port="$(kafka_port "$(member_index "$name")")"
    until port_open "$port"; do
      running_pid "$name" >/dev/null || { tail -n 25 "$LOG_DIR/$name.log" >&2; die "$name exited while starting (log above)"; }
      [ "$t" -ge "$limit" ] && { tail -n 25 "$LOG_DIR/$name.log" >&2; die "$name did not open port $port within ${limit}s (log above)"; }
      sleep 1; t=$((t + 1))
    done
  done
  "$JAVA" -cp "$(kafka_cp)" -Dlog4j2.configurationFile="$STACK_SRC/kafka/log4j2.properties" -Dkafka.logs.dir="$LOG_DIR/topics" \
    "$STACK_SRC/kafka/CreateTopics.java" "$(kafka_bootstrap)" \
    "$STACK_SRC/../schemas/topics.conf" "$STACK_SRC/kafka/acls.conf" "$SECRETS_DIR" \
    "$KAFKA_REPLICATION_FACTOR" "$KAFKA_MIN_INSYNC_REPLICAS" \
    || die "setting Kafka's credentials, topics and ACLs failed (see above)"
  touch "$RUN_DIR/kafka.topics-ok"
}

flink_java() {
  mapfile -t opts < "$STACK_SRC/flink/jvm-opts"
  echo "${opts[@]}"
}

# gc_log NAME: one line per collection (cause, heap before and after, pause) in logs/NAME-gc.log,
# three files of 20 MB at most, for telling GC from the job's work when a process's CPU grows.
gc_log() {
  echo "-Xlog:gc:file=$LOG_DIR/$1-gc.log:time,uptime:filecount=3,filesize=20m"
}

# Flink's own memory calculator (what flink-dist's jobmanager.sh / taskmanager.sh run).
flink_params() {
  "$JAVA" -cp "$(flink_cp)" org.apache.flink.runtime.util.bash.BashJavaUtils "$1" --configDir "$STACK_DIR/flink/conf" 2>&1 \
    | grep '^BASH_JAVA_UTILS_EXEC_RESULT:' | sed 's/^BASH_JAVA_UTILS_EXEC_RESULT://'
}

start_flink() {
  local conf="$STACK_DIR/flink/conf"
  mkdir -p "$conf" "$STACK_DIR/flink/tmp" "$STACK_DIR/flink/checkpoints" "$STACK_DIR/flink/savepoints"
  render "$STACK_SRC/flink/config.yaml.in" "$conf/config.yaml"
  cp "$STACK_SRC/flink/log4j.properties" "$conf/log4j.properties"
  local common=(-Dlog4j.configurationFile="$conf/log4j.properties" -Dlog4j2.configurationFile="$conf/log4j.properties")
  if ! running_pid flink-jobmanager >/dev/null; then
    local jm; jm="$(flink_params GET_JM_RESOURCE_PARAMS | head -n 1)"
    [ -n "$jm" ] || die "Flink's BashJavaUtils could not size the JobManager from $conf/config.yaml"
    # shellcheck disable=SC2046,SC2086
    start flink-jobmanager "$FLINK_REST_PORT" "$JAVA" $jm $(flink_java) "$(gc_log flink-jobmanager)" "${common[@]}" \
      -Dlog.file="$LOG_DIR/flink-jobmanager.log" -cp "$(flink_cp)" \
      org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint --configDir "$conf" --executionMode cluster
  else
    say "flink-jobmanager already running (pid $(running_pid flink-jobmanager))"
  fi
  local i name tmp out="" jvm dyn
  for ((i = 0; i < FLINK_TASKMANAGERS; i++)); do
    name="$(member flink-taskmanager "$i")"
    if running_pid "$name" >/dev/null; then
      say "$name already running (pid $(running_pid "$name"))"; continue
    fi
    [ -n "$out" ] || out="$(flink_params GET_TM_RESOURCE_PARAMS)"
    jvm="$(echo "$out" | sed -n 1p)"; dyn="$(echo "$out" | sed -n 2p)"
    [ -n "$jvm" ] || die "Flink's BashJavaUtils could not size the TaskManager from $conf/config.yaml"
    # Member i > 0 has its own temporary directory; every member its resource id (its name: the
    # JobManager's REST API lists it so) and its log and GC log.
    tmp="$STACK_DIR/flink/tmp"; [ "$i" -eq 0 ] || tmp="$STACK_DIR/flink/tmp-$i"
    mkdir -p "$tmp"
    # shellcheck disable=SC2046,SC2086
    start "$name" - "$JAVA" $jvm $(flink_java) "$(gc_log "$name")" "${common[@]}" \
      -Dlog.file="$LOG_DIR/$name.log" -cp "$(flink_cp)" \
      org.apache.flink.runtime.taskexecutor.TaskManagerRunner --configDir "$conf" $dyn \
      -D taskmanager.resource-id="$name" -D io.tmp.dirs="$tmp"
  done
}

start_telegraf() {
  if [ ! -x "$TELEGRAF" ]; then
    say "Telegraf is not built ($TELEGRAF): host metrics are off (stack/setup.sh telegraf builds it; make test does)"
    return 0
  fi
  KAFKA_TELEGRAF_BROKERS="\"$(kafka_bootstrap | sed 's/,/", "/g')\""
  render "$STACK_SRC/telegraf/telegraf.conf.in" "$STACK_DIR/telegraf/telegraf.conf"
  start telegraf - "$TELEGRAF" --config "$STACK_DIR/telegraf/telegraf.conf"
}

check_config
case "${1:-}" in
  # --check: the configuration checks alone, then every member's ports.
  --check)
    for s in $(members kafka "$KAFKA_BROKERS"); do
      i="$(member_index "$s")"
      say "$s: node.id $((i + 1)), $STACK_HOST:$(kafka_port "$i"), controller $STACK_HOST:$(kafka_controller_port "$i")"
    done
    say "Kafka bootstrap $(kafka_bootstrap), replication factor $KAFKA_REPLICATION_FACTOR, min.insync.replicas $KAFKA_MIN_INSYNC_REPLICAS"
    say "Flink: $FLINK_TASKMANAGERS TaskManager(s) of $FLINK_TM_SLOTS slots: $(members flink-taskmanager "$FLINK_TASKMANAGERS" | tr '\n' ' ')"
    say "configuration of $STACK_ENV is valid"
    exit 0 ;;
  # --render: also make the secrets and render every Kafka node's and Flink's configuration under
  # STACK_DIR (as server.properties.new and flink/conf), starting nothing.
  --render)
    mkdir -p "$RUN_DIR" "$LOG_DIR"
    make_secrets
    for ((i = 0; i < KAFKA_BROKERS; i++)); do render_kafka_node "$i"; say "rendered $STACK_DIR/$(member kafka "$i")/server.properties.new"; done
    render "$STACK_SRC/flink/config.yaml.in" "$STACK_DIR/flink/conf/config.yaml"
    say "rendered $STACK_DIR/flink/conf/config.yaml"
    exit 0 ;;
  "") ;;
  *) die "usage: $0 [--check | --render]" ;;
esac
check_tools
mkdir -p "$RUN_DIR" "$LOG_DIR" "$LOG_DIR/topics"
make_secrets
if declare -F start_clickhouse_cluster >/dev/null; then start_clickhouse_cluster; else start_clickhouse; fi
start_kafka
start_flink
create_topics
start_telegraf
wait_for clickhouse 60
if declare -F wait_clickhouse_cluster >/dev/null; then wait_clickhouse_cluster; fi
for s in $(members kafka "$KAFKA_BROKERS"); do wait_for "$s" 60; done
wait_for flink-jobmanager 90
for s in $(members flink-taskmanager "$FLINK_TASKMANAGERS"); do wait_for "$s" 90; done
if [ -x "$TELEGRAF" ]; then wait_for telegraf 30; fi
say "all servers answer: Kafka $(kafka_bootstrap), Flink UI http://$STACK_HOST:$FLINK_REST_PORT, ClickHouse http://$STACK_HOST:$CLICKHOUSE_HTTP_PORT"
