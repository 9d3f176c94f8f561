#!/usr/bin/env bash
# make up: start the local stack (ClickHouse, Kafka, Flink JobManager + TaskManager, Telegraf)
# as plain processes with state and logs under .stack/, and wait until each one answers.
# A server that is already running is left alone, so a second `make up` does nothing.
. "$(dirname "$0")/lib.sh"

# --- configuration checks: fail early with what to fix ---------------------------------------
check_config() {
  local seen="" var val
  for var in KAFKA_PORT KAFKA_CONTROLLER_PORT FLINK_REST_PORT FLINK_RPC_PORT FLINK_BLOB_PORT CLICKHOUSE_HTTP_PORT \
             CLICKHOUSE_TCP_PORT CLICKHOUSE_INTERSERVER_PORT; do
    val="${!var:-}"
    [[ "$val" =~ ^[0-9]+$ ]] && [ "$val" -ge 1 ] && [ "$val" -le 65535 ] \
      || die "$var='$val' in $STACK_ENV is not a port number (1-65535): fix it there"
    case " $seen " in *" $val "*) die "$var=$val in $STACK_ENV is used twice: give each server its own port";; esac
    seen="$seen $val"
  done
  CLICKHOUSE_NICE="${CLICKHOUSE_NICE:-0}"
  [[ "$CLICKHOUSE_NICE" =~ ^[0-9]+$ ]] && [ "$CLICKHOUSE_NICE" -le 19 ] \
    || die "CLICKHOUSE_NICE='$CLICKHOUSE_NICE' in $STACK_ENV is not a nice level (0-19): fix it there"
  command -v "$JAVA" >/dev/null 2>&1 \
    || die "Java not found ('$JAVA'): install a JDK 17 (apt-get install openjdk-17-jdk-headless, or make setup) or set JAVA=/path/to/java"
  local jv
  jv="$("$JAVA" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}')"
  [ "${jv%%.*}" -ge 17 ] 2>/dev/null || die "Java $jv at '$(command -v "$JAVA")' is too old: Kafka 4 and Flink 2 need Java 17 or newer"
  [ -x "$CLICKHOUSE_SERVER" ] || die "ClickHouse server not found at $CLICKHOUSE_SERVER: run make setup (Debian package clickhouse-server)"
  [ -x "$TELEGRAF" ] || die "Telegraf not found at $TELEGRAF: run make setup"
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

start_kafka() {
  local d="$STACK_DIR/kafka" cp
  cp="$(kafka_cp)"
  render "$STACK_SRC/kafka/server.properties.in" "$d/server.properties.new"
  cat "$SECRETS_DIR/server-sasl.properties" >> "$d/server.properties.new"
  if running_pid kafka >/dev/null && ! cmp -s "$d/server.properties.new" "$d/server.properties"; then
    rm -f "$d/server.properties.new"
    die "the running Kafka has an older configuration (e.g. from before authentication): make down && make up"
  fi
  mv "$d/server.properties.new" "$d/server.properties"
  if [ ! -f "$d/data/meta.properties" ]; then
    local id
    id="$("$JAVA" -cp "$cp" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1)"
    "$JAVA" -cp "$cp" -Dlog4j2.configurationFile="$STACK_SRC/kafka/log4j2.properties" -Dkafka.logs.dir="$LOG_DIR" \
      kafka.tools.StorageTool format -t "$id" -c "$d/server.properties" >> "$LOG_DIR/kafka.log" 2>&1 \
      || die "formatting Kafka's storage failed; see $LOG_DIR/kafka.log"
  fi
  rm -f "$RUN_DIR/kafka.topics-ok"
  start kafka "$KAFKA_PORT" "$JAVA" -Xms"$KAFKA_HEAP" -Xmx"$KAFKA_HEAP" -XX:+UseG1GC \
    -Dlog4j2.configurationFile="$STACK_SRC/kafka/log4j2.properties" -Dkafka.logs.dir="$LOG_DIR" \
    -cp "$cp" kafka.Kafka "$d/server.properties"
}

create_topics() {
  local t=0
  until port_open "$KAFKA_PORT"; do
    running_pid kafka >/dev/null || { tail -n 25 "$LOG_DIR/kafka.log" >&2; die "kafka exited while starting (log above)"; }
    [ "$t" -ge 60 ] && { tail -n 25 "$LOG_DIR/kafka.log" >&2; die "kafka did not open port $KAFKA_PORT within 60s (log above)"; }
    sleep 1; t=$((t + 1))
  done
  "$JAVA" -cp "$(kafka_cp)" -Dlog4j2.configurationFile="$STACK_SRC/kafka/log4j2.properties" -Dkafka.logs.dir="$LOG_DIR/topics" \
    "$STACK_SRC/kafka/CreateTopics.java" "$STACK_HOST:$KAFKA_PORT" \
    "$STACK_SRC/../schemas/topics.conf" "$STACK_SRC/kafka/acls.conf" "$SECRETS_DIR" \
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
  if ! running_pid flink-taskmanager >/dev/null; then
    local out jvm dyn
    out="$(flink_params GET_TM_RESOURCE_PARAMS)"
    jvm="$(echo "$out" | sed -n 1p)"; dyn="$(echo "$out" | sed -n 2p)"
    [ -n "$jvm" ] || die "Flink's BashJavaUtils could not size the TaskManager from $conf/config.yaml"
    # shellcheck disable=SC2046,SC2086
    start flink-taskmanager - "$JAVA" $jvm $(flink_java) "$(gc_log flink-taskmanager)" "${common[@]}" \
      -Dlog.file="$LOG_DIR/flink-taskmanager.log" -cp "$(flink_cp)" \
      org.apache.flink.runtime.taskexecutor.TaskManagerRunner --configDir "$conf" $dyn
  else
    say "flink-taskmanager already running (pid $(running_pid flink-taskmanager))"
  fi
}

start_telegraf() {
  render "$STACK_SRC/telegraf/telegraf.conf.in" "$STACK_DIR/telegraf/telegraf.conf"
  start telegraf - "$TELEGRAF" --config "$STACK_DIR/telegraf/telegraf.conf"
}

check_config
mkdir -p "$RUN_DIR" "$LOG_DIR" "$LOG_DIR/topics"
make_secrets
start_clickhouse
start_kafka
start_flink
create_topics
start_telegraf
wait_for clickhouse 60
wait_for kafka 60
wait_for flink-jobmanager 90
wait_for flink-taskmanager 90
wait_for telegraf 30
say "all servers answer: Kafka $STACK_HOST:$KAFKA_PORT, Flink UI http://$STACK_HOST:$FLINK_REST_PORT, ClickHouse http://$STACK_HOST:$CLICKHOUSE_HTTP_PORT"
