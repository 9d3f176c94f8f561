# Shared functions of the stack scripts (sourced, not run).
set -euo pipefail

STACK_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$STACK_SRC/.." && pwd)"
STACK_ENV="${STACK_ENV:-$STACK_SRC/stack.env}"
# shellcheck disable=SC1090
. "$STACK_ENV"
STACK_DIR="${STACK_DIR:-$ROOT/.stack}"
RUN_DIR="$STACK_DIR/run"
LOG_DIR="$STACK_DIR/logs"
LIB_DIR="$STACK_DIR/lib"
BIN_DIR="$STACK_DIR/bin"
# Kafka's CA, server key and one client file per principal (stack/kafka/make-secrets.sh), 0700
SECRETS_DIR="$STACK_DIR/secrets"
JAVA="${JAVA:-java}"
CLICKHOUSE_SERVER="${CLICKHOUSE_SERVER:-/usr/sbin/clickhouse-server}"
TELEGRAF="${TELEGRAF:-$BIN_DIR/telegraf}"
# The multi-node profile (stack/multi.env) runs more members of Kafka and Flink; absent keys
# mean one of each, the single-node stack.
KAFKA_BROKERS="${KAFKA_BROKERS:-1}"
FLINK_TASKMANAGERS="${FLINK_TASKMANAGERS:-1}"
KAFKA_REPLICATION_FACTOR="${KAFKA_REPLICATION_FACTOR:-1}"
KAFKA_MIN_INSYNC_REPLICAS="${KAFKA_MIN_INSYNC_REPLICAS:-1}"
# Flink's Prometheus reporter: each Flink process (the JobManager, then each TaskManager) takes
# the first free port of this range, right above the REST port unless STACK_ENV sets it.
FLINK_METRICS_PORTS="${FLINK_METRICS_PORTS:-$((FLINK_REST_PORT + 1))-$((FLINK_REST_PORT + 1 + FLINK_TASKMANAGERS))}"

# member NAME I: the server name of member I (0-based) of a cluster: NAME, NAME-1, NAME-2...
member() { if [ "$2" -eq 0 ]; then echo "$1"; else echo "$1-$2"; fi; }
# members NAME COUNT: the names of every member
members() { local i; for ((i = 0; i < $2; i++)); do member "$1" "$i"; done; }
# member_index NAME: I of a member's name (kafka-2 -> 2, kafka -> 0)
member_index() { case "$1" in *-[0-9]*) echo "${1##*-}" ;; *) echo 0 ;; esac; }
# Kafka broker I listens on KAFKA_PORT+2I, its controller on KAFKA_CONTROLLER_PORT+2I.
kafka_port() { echo $((KAFKA_PORT + 2 * $1)); }
kafka_controller_port() { echo $((KAFKA_CONTROLLER_PORT + 2 * $1)); }
# Every broker, comma-separated: what every client is given, so any one member may be down.
kafka_bootstrap() {
  local i out=""
  for ((i = 0; i < KAFKA_BROKERS; i++)); do out="$out${out:+,}$STACK_HOST:$(kafka_port "$i")"; done
  echo "$out"
}

SERVERS="clickhouse $(members kafka "$KAFKA_BROKERS" | tr '\n' ' ')flink-jobmanager $(members flink-taskmanager "$FLINK_TASKMANAGERS" | tr '\n' ' ')"
# Telegraf (host metrics) is one of them once built (stack/setup.sh telegraf; make test builds it,
# make demo does not), or while one the stack started runs.
if [ -x "$TELEGRAF" ] || [ -f "$RUN_DIR/telegraf.pid" ]; then SERVERS="${SERVERS}telegraf"; fi
# ClickHouse as a cluster (shards x replicas > 1): its other nodes and ZooKeeper join SERVERS.
if [ "${CLICKHOUSE_SHARDS:-1}" != 1 ] || [ "${CLICKHOUSE_REPLICAS:-1}" != 1 ]; then
  # shellcheck source=clickhouse-cluster.sh
  . "$STACK_SRC/clickhouse-cluster.sh"
fi

say() { echo "stack: $*"; }
die() { echo "stack: error: $*" >&2; exit 1; }

pidfile() { echo "$RUN_DIR/$1.pid"; }

# The PID of server $1 if it is running and is the process we started (its command line
# names our stack directory, so a reused PID of some other program is never touched).
running_pid() {
  local f pid
  f="$(pidfile "$1")"
  [ -f "$f" ] || return 1
  pid="$(cat "$f")"
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "$STACK_DIR" || return 1
  echo "$pid"
}

port_open() { (exec 3<>"/dev/tcp/$STACK_HOST/$1") 2>/dev/null; }

# Telegraf's log since its last start (the log is appended to) has loaded the Kafka output, and
# of its write reports (debug "Wrote batch", or "E!" errors) the last is not an error: after
# Kafka comes back it is healthy again at its next flush.
telegraf_writes() {
  awk '/Loaded outputs: kafka/ { loaded = 1; err = 0 }
       loaded && /E! / { err = 1 }
       loaded && /Wrote batch of/ { err = 0 }
       END { exit !(loaded && !err) }' "$LOG_DIR/telegraf.log" 2>/dev/null
}

# Is server $1 answering its clients?
healthy() {
  case "$1" in
    clickhouse) [ "$(curl -fsS --max-time 2 "http://$STACK_HOST:$CLICKHOUSE_HTTP_PORT/ping" 2>/dev/null)" = "Ok." ] ;;
    kafka | kafka-[0-9]*) port_open "$(kafka_port "$(member_index "$1")")" && [ -f "$RUN_DIR/kafka.topics-ok" ] ;;
    flink-jobmanager) curl -fsS --max-time 2 "http://$STACK_HOST:$FLINK_REST_PORT/config" >/dev/null 2>&1 ;;
    flink-taskmanager)
      if [ "$FLINK_TASKMANAGERS" -gt 1 ]; then flink_tm_registered "$1"; else
        curl -fsS --max-time 2 "http://$STACK_HOST:$FLINK_REST_PORT/overview" 2>/dev/null \
          | grep -Eq '"taskmanagers":[1-9]'
      fi ;;
    flink-taskmanager-[0-9]*) flink_tm_registered "$1" ;;
    telegraf) running_pid telegraf >/dev/null && telegraf_writes ;;
    clickhouse-*|zookeeper) cluster_healthy "$1" ;;
    *) return 1 ;;
  esac
}

# flink_tm_registered NAME: the JobManager lists the TaskManager started with resource id NAME,
# and its last heartbeat is from the running process (after a kill -9 the JobManager lists the
# dead one under that id until its heartbeat times out).
flink_tm_registered() {
  local pid start hb
  pid="$(running_pid "$1")" || return 1
  start=$(( ($(awk '/^btime/ {print $2}' /proc/stat) + $(awk '{print $22}' "/proc/$pid/stat") / $(getconf CLK_TCK)) * 1000 ))
  hb="$(curl -fsS --max-time 2 "http://$STACK_HOST:$FLINK_REST_PORT/taskmanagers" 2>/dev/null \
    | jq -r --arg n "$1" '.taskmanagers[] | select(.id == $n) | .timeSinceLastHeartbeat' 2>/dev/null)"
  [ -n "$hb" ] && [ "$hb" -ge "$start" ]
}

# client_prop PRINCIPAL KEY: a property of a principal's Kafka client file.
client_prop() {
  sed -n "s/^$2=//p" "$SECRETS_DIR/kafka-$1.properties" | tail -n 1
}

kafka_cp() { echo "$LIB_DIR/kafka/*"; }
flink_cp() { echo "$LIB_DIR/flink/*"; }
