#!/usr/bin/env bash
# Fleet simulator throughput, pinned to one core (taskset: librdkafka's threads included):
#   1. generation + Avro encoding alone (--dry-run), samples/s
#   2. published to the local Kafka, samples/s including the final flush. Target: >= 500,000/s.
#      Into a temporary topic with cpi2.samples' 8 partitions (created and deleted here), so the
#      pipeline's cpi2.samples does not get millions of bench samples.
# Usage: bench.sh [PATH/TO/cpi2-fleetsim]   (default: $C_BUILD/collectors/fleetsim/cpi2-fleetsim)
# Env: BENCH_TOPIC (publish there instead of a temporary topic), BENCH_SCENARIO (default fleet300), BENCH_DURATION (simulated, default 4h),
#      BENCH_CPU (core to pin to, default 1), BENCH_BROKERS (default the stack's brokers: KAFKA_BROKERS of
#      them, the multi-node profile's count, from ${STACK_HOST:-127.0.0.1}:${KAFKA_PORT:-9092} on by 2).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=${1:-${C_BUILD:-$ROOT/build/c}/collectors/fleetsim/cpi2-fleetsim}
SCN=${BENCH_SCENARIO:-fleet300}
DUR=${BENCH_DURATION:-4h}
CPU=${BENCH_CPU:-1}
BROKERS=${BENCH_BROKERS:-}
if [ -z "$BROKERS" ]; then
  for ((i = 0; i < ${KAFKA_BROKERS:-1}; i++)); do
    BROKERS="$BROKERS${BROKERS:+,}${STACK_HOST:-127.0.0.1}:$((${KAFKA_PORT:-9092} + 2 * i))"
  done
fi
# the bench topic is admin's (collector may write cpi2.samples only): the stack's admin client file
CLIENT=${STACK_DIR:-$ROOT/.stack}/secrets/kafka-admin.properties
CLIENT_ARGS=()
[ -f "$CLIENT" ] && CLIENT_ARGS=(--kafka-client-file "$CLIENT") || CLIENT=
[ -x "$BIN" ] || { echo "fleetsim bench: $BIN is not built (make -C collectors build)" >&2; exit 1; }
PIN="taskset -c $CPU"
command -v taskset >/dev/null || PIN=""

echo "fleetsim bench: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); pinned: ${PIN:-no (taskset missing)}"
echo "fleetsim bench: scenario $SCN, $DUR of simulated time at --speed max, no warmup"

last_line() { grep -E "(done|stopped): " "$1" | tail -1 | sed 's/^.*fleetsim[^:]*: //'; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT
$PIN "$BIN" -s "$SCN" --dry-run --speed max --warmup 0 --duration "$DUR" --truth none --progress 1000 2>"$log"
echo "generation + Avro encoding (no Kafka): $(last_line "$log")"

if ! (exec 3<>"/dev/tcp/${BROKERS%:*}/${BROKERS##*:}") 2>/dev/null; then
	echo "fleetsim bench: Kafka at $BROKERS does not answer; starting the stack (make up)"
	make -C "$ROOT" up >/dev/null || { echo "fleetsim bench: no Kafka, publish benchmark skipped" >&2; exit 1; }
fi
PY=$ROOT/.venv/bin/python
topic_admin() { # create|delete TOPIC
	"$PY" - "$1" "$2" "$BROKERS" "$CLIENT" <<'PYEOF'
import sys
op, topic, brokers, client = sys.argv[1:5]
from confluent_kafka.admin import AdminClient, NewTopic
from cpi2.repo import read_client_file
a = AdminClient(dict(read_client_file(client) if client else {}, **{"bootstrap.servers": brokers}))
f = a.create_topics([NewTopic(topic, num_partitions=8, replication_factor=1)]) if op == "create" else a.delete_topics([topic])
f[topic].result(30)
PYEOF
}
TOPIC=${BENCH_TOPIC:-}
if [ -z "$TOPIC" ]; then
	[ -x "$PY" ] || { echo "fleetsim bench: $PY missing (make setup): cannot create the bench topic" >&2; exit 1; }
	TOPIC=fleetsim-bench-$$
	topic_admin create "$TOPIC" || { echo "fleetsim bench: cannot create topic $TOPIC" >&2; exit 1; }
	trap 'rm -f "$log"; topic_admin delete "$TOPIC"' EXIT
fi
# throughput settings, passed through to librdkafka as a user would
$PIN "$BIN" -s "$SCN" --speed max --warmup 0 --duration "$DUR" --truth none --progress 1000 -b "$BROKERS" -t "$TOPIC" \
	"${CLIENT_ARGS[@]}" -X linger.ms=50 -X batch.num.messages=100000 -X batch.size=8000000 \
	-X queue.buffering.max.messages=2000000 -X queue.buffering.max.kbytes=2000000 \
	-X compression.type=lz4 2>"$log"
rc=$?
echo "published to Kafka $BROKERS topic $TOPIC (8 partitions; lz4, linger 50 ms, idempotent): $(last_line "$log")"
grep -E "ERR|WARN" "$log" | tail -3
exit $rc
