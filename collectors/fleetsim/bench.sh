#!/usr/bin/env bash
# Fleet simulator throughput, pinned to one core (taskset: librdkafka's threads included):
#   1. generation + Avro encoding alone (--dry-run), samples/s
#   2. published to the local Kafka (cpi2.samples), samples/s including the final flush,
#      with the producer's delivery count. Target: >= 500,000 samples/s.
# Usage: bench.sh [PATH/TO/cpi2-fleetsim]   (default: $C_BUILD/collectors/fleetsim/cpi2-fleetsim)
# Env: BENCH_SCENARIO (default fleet300), BENCH_DURATION (simulated, default 4h),
#      BENCH_CPU (core to pin to, default 1), KAFKA_BROKERS (default 127.0.0.1:${KAFKA_PORT:-9092}).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=${1:-${C_BUILD:-$ROOT/build/c}/collectors/fleetsim/cpi2-fleetsim}
SCN=${BENCH_SCENARIO:-fleet300}
DUR=${BENCH_DURATION:-4h}
CPU=${BENCH_CPU:-1}
BROKERS=${KAFKA_BROKERS:-${STACK_HOST:-127.0.0.1}:${KAFKA_PORT:-9092}}
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
# throughput settings, passed through to librdkafka as a user would
$PIN "$BIN" -s "$SCN" --speed max --warmup 0 --duration "$DUR" --truth none --progress 1000 -b "$BROKERS" \
	-X linger.ms=50 -X batch.num.messages=100000 -X batch.size=8000000 \
	-X queue.buffering.max.messages=2000000 -X queue.buffering.max.kbytes=2000000 \
	-X compression.type=lz4 2>"$log"
rc=$?
echo "published to Kafka $BROKERS topic cpi2.samples (lz4, linger 50 ms): $(last_line "$log")"
grep -E "delivered|error" "$log" | tail -2
exit $rc
