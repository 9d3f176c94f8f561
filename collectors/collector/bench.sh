#!/bin/sh
# Collector CPU time for 200 cgroups on this machine: 200 cgroups
# /sys/fs/cgroup/unified/cpi2-bench-NNN, each with one sleeping process that is in the v1 cpu
# cgroup of the same name too (the layout the lab and the enforcer use), counted with task-clock
# (no hardware counters here) and the signals beside it (PSI, resctrl where mounted).
#  1. the default duty cycle: 10 s windows, one every 60 s (here every 12 s, to be quick); the
#     collector's own CPU time per window comes from its log line (getrusage over the period) and
#     the cost is that time over 60 s. Target: < 0.1% of one CPU.
#  2. the fast profile: a 1 s window every second, back to back (each begins where the one
#     before ended); the cost is the collector's CPU over the wall time. Target: < 1% of one CPU.
#  3. the fast profile with scraping: the same, with BENCH_SCRAPED (20) of the cgroups' labels
#     naming a metrics endpoint (bench_endpoints.py: HTTP servers of this machine answering a
#     real redis exporter's 29 KB with moving counters; their CPU is not the collector's), so
#     each window scrapes 20 endpoints and parses 20 answers; its cost beside part 2's is what
#     scraping adds. Every scrape must succeed and every scraped sample carry both values.
#     Target: < 1% of one CPU.
#  4. the fast profile with the metrics server: part 2 with --metrics-address and a client that
#     fetches /metrics and /healthz once a second (a Prometheus at a 1 s interval, and a probe);
#     its cost beside part 2's is what serving the metrics adds (the server's thread is the
#     collector's: getrusage counts it).
# Removes the cgroups afterwards. Usage: bench.sh BUILD_DIR
set -eu
BIN=${1:?build dir}/collectors/collector/cpi2-collector
ROOT=/sys/fs/cgroup/unified
V1=/sys/fs/cgroup/cpu
N=${BENCH_CGROUPS:-200}
WINDOWS=${BENCH_WINDOWS:-3}
FAST_WINDOWS=${BENCH_FAST_WINDOWS:-30}
SCRAPED=${BENCH_SCRAPED:-20}
HERE=$(cd "$(dirname "$0")" && pwd)
FIXTURE=$HERE/../../libcpi2/tests/data/promtext/redis-exporter-1.45-b.txt
if [ "$(id -u)" != 0 ] || [ ! -e $ROOT/cgroup.controllers ]; then
	echo "collector bench: SKIPPED (needs root and cgroup v2 at $ROOT)"
	exit 0
fi
TMP=$(mktemp -d)
cleanup() {
	for d in $ROOT/cpi2-bench-*; do
		[ -d "$d" ] || continue
		for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill "$p" 2>/dev/null || true; done
	done
	sleep 0.2
	for d in $ROOT/cpi2-bench-* $V1/cpi2-bench-*; do [ -d "$d" ] && rmdir "$d" 2>/dev/null || true; done
	[ -s "$TMP/endpoints.pid" ] && kill "$(cat "$TMP/endpoints.pid")" 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
i=0
while [ $i -lt "$N" ]; do
	d=$ROOT/$(printf 'cpi2-bench-%03d' $i)
	mkdir -p "$d"
	if [ -w $V1/cgroup.procs ]; then
		d1=$V1/$(basename "$d")
		mkdir -p "$d1"
		sh -c "echo \$\$ > $d/cgroup.procs; echo \$\$ > $d1/cgroup.procs; exec sleep 3600" &
	else
		sh -c "echo \$\$ > $d/cgroup.procs; exec sleep 3600" &
	fi
	i=$((i + 1))
done
sleep 0.5
printf '%s\n' 'cpi2-bench-* job=bench task_id=$1 class=batch' '** ignore' >"$TMP/rules"
echo "collector bench: $N cgroups, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), task-clock, window 10 s, $WINDOWS windows 12 s apart, dry run (samples encoded, not sent)"
"$BIN" --events task-clock --roots $ROOT --rules-file "$TMP/rules" --default-rules=false --window-s 10 \
	--period-s 12 --windows "$WINDOWS" --dry-run 2>"$TMP/log"
grep 'window:' "$TMP/log" | sed 's/.*window: //' | cut -c1-60 | sed 's/^/  /' | head -1
# the first period includes start-up; the others are steady state
grep 'window:' "$TMP/log" | tail -n +2 | sed 's/.*own cpu \([0-9.]*\) ms.*/\1/' | awk -v n="$N" '
	{ s += $1; c++; if ($1 > m) m = $1 }
	END {
		if (!c) { print "  no steady-state window"; exit 1 }
		printf "  own CPU per window (steady state, %d windows): mean %.1f ms, max %.1f ms\n", c, s / c, m
		printf "  at the default duty cycle (one 10 s window every 60 s): %.4f%% of one CPU (target < 0.1%%)\n", 100 * s / c / 1000 / 60
		printf "  per cgroup: %.1f us per window\n", 1000 * s / c / n
		exit (100 * m / 1000 / 60 < 0.1) ? 0 : 2
	}' || rc=$?
echo "collector bench, 1 s profile: $N cgroups, window 1 s every 1 s, $FAST_WINDOWS windows, task-clock + PSI$( [ -d /sys/fs/resctrl/mon_groups ] && echo ' + resctrl' || echo ' (no resctrl here)'), dry run"
"$BIN" --events task-clock --roots $ROOT --rules-file "$TMP/rules" --default-rules=false --window-s 1 \
	--period-s 1 --windows "$FAST_WINDOWS" --dry-run 2>"$TMP/log1"
grep -q 'samples' "$TMP/log1" || { cat "$TMP/log1"; exit 1; }
grep 'window:' "$TMP/log1" | sed 's/.*window: //' | cut -c1-60 | sed 's/^/  /' | head -1
# per period: own CPU ms and wall s; the first includes start-up
grep 'window:' "$TMP/log1" | tail -n +2 | sed 's/.*own cpu \([0-9.]*\) ms in \([0-9.]*\) s.*/\1 \2/' | awk -v n="$N" '
	{ cpu += $1; wall += $2; c++; pct = $2 > 0 ? $1 / 10 / $2 : 0; if (pct > m) m = pct }
	END {
		if (!c || wall <= 0) { print "  no steady-state window"; exit 1 }
		printf "  own CPU (steady state, %d windows over %.1f s): %.2f ms per window, %.3f%% of one CPU (max window %.3f%%; target < 1%%)\n", c, wall, cpu / c, cpu / 10 / wall, m
		printf "  per cgroup: %.1f us per window\n", 1000 * cpu / c / n
		exit (cpu / 10 / wall < 1) ? 0 : 2
	}' || rc=$?
python3 "$HERE/bench_endpoints.py" "$SCRAPED" "$FIXTURE" "$TMP/ports" &
echo $! >"$TMP/endpoints.pid"
i=0
while [ ! -s "$TMP/ports" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$TMP/ports" ] || { echo "collector bench: the endpoints did not start"; exit 1; }
i=0
: >"$TMP/labels"
while read -r port; do
	printf 'cpi2-bench-%03d bench %d batch scrape=http://127.0.0.1:%s/metrics work=redis_commands_processed_total latency=redis_latency_percentiles_usec{cmd="get"}\n' \
		$i $i "$port" >>"$TMP/labels"
	i=$((i + 1))
done <"$TMP/ports"
echo "collector bench, 1 s profile with scraping: $N cgroups, $SCRAPED of them scraped each window (answers of $(wc -c <"$FIXTURE") bytes, $(grep -vc '^#' "$FIXTURE") samples: prometheus-redis-exporter 1.45; work counter and a summary's mean), $FAST_WINDOWS windows, task-clock + PSI, dry run"
"$BIN" --events task-clock --roots $ROOT --rules-file "$TMP/rules" --labels-file "$TMP/labels" --default-rules=false \
	--window-s 1 --period-s 1 --windows "$FAST_WINDOWS" --dry-run 2>"$TMP/log2"
grep 'window:' "$TMP/log2" | sed 's/.*window: //' | cut -c1-60 | sed 's/^/  /' | head -1
grep 'window:' "$TMP/log2" | tail -n +2 | sed 's/.*own cpu \([0-9.]*\) ms in \([0-9.]*\) s.*scrapes: \([0-9]*\), \([0-9]*\) failed.*cpu_per_op \([0-9]*\), \([0-9]*\) null.*latency \([0-9]*\), \([0-9]*\) null.*/\1 \2 \3 \4 \5 \6 \7 \8/' | awk -v n="$N" -v k="$SCRAPED" '
	NF == 8 { cpu += $1; wall += $2; scrapes += $3; failed += $4; cpo += $5; cnull += $6; lat += $7; lnull += $8; c++ }
	END {
		if (!c || wall <= 0) { print "  no steady-state window"; exit 1 }
		printf "  own CPU (steady state, %d windows over %.1f s): %.2f ms per window, %.3f%% of one CPU (target < 1%%)\n", c, wall, cpu / c, cpu / 10 / wall
		printf "  scrapes: %d, %d failed; cpu_per_op %d, %d null; latency %d, %d null\n", scrapes, failed, cpo, cnull, lat, lnull
		printf "  per scraped task: %.1f us per window over the whole collector (CPU per window / %d)\n", 1000 * cpu / c / k, k
		exit (cpu / 10 / wall < 1 && failed == 0 && cnull == 0 && lnull == 0 && scrapes >= c * k) ? 0 : 2
	}' || rc=$?
# what scraping adds: this part's CPU per window less part 2's, per scrape
a=$(grep 'window:' "$TMP/log1" | tail -n +2 | sed 's/.*own cpu \([0-9.]*\) ms.*/\1/' | awk '{ s += $1; c++ } END { if (c) printf "%.4f", s / c }')
b=$(grep 'window:' "$TMP/log2" | tail -n +2 | sed 's/.*own cpu \([0-9.]*\) ms.*/\1/' | awk '{ s += $1; c++ } END { if (c) printf "%.4f", s / c }')
echo "$a $b $SCRAPED" | awk '{ printf "  scraping adds %.2f ms per window to %.2f ms without it: %.1f us per scrape (connect, request, read, parse, values)\n", $2 - $1, $1, 1000 * ($2 - $1) / $3 }'
echo "collector bench, 1 s profile with the metrics server: part 2 with --metrics-address 127.0.0.1:0, /metrics and /healthz fetched once a second (curl), $FAST_WINDOWS windows"
"$BIN" --events task-clock --roots $ROOT --rules-file "$TMP/rules" --default-rules=false --window-s 1 \
	--period-s 1 --windows "$FAST_WINDOWS" --dry-run --metrics-address 127.0.0.1:0 2>"$TMP/log3" &
pid=$!
port=
i=0
while [ -z "$port" ] && [ $i -lt 100 ]; do
	port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$TMP/log3" | head -1)
	sleep 0.1
	i=$((i + 1))
done
[ -n "$port" ] || { cat "$TMP/log3"; echo "collector bench: no metrics server"; exit 1; }
fetched=0
while kill -0 $pid 2>/dev/null; do
	curl -fsS "http://127.0.0.1:$port/metrics" >/dev/null 2>&1 && curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 \
		&& fetched=$((fetched + 1))
	sleep 1
done
wait $pid || { cat "$TMP/log3"; exit 1; }
c=$(grep 'window:' "$TMP/log3" | tail -n +2 | sed 's/.*own cpu \([0-9.]*\) ms.*/\1/' | awk '{ s += $1; c++ } END { if (c) printf "%.4f", s / c }')
echo "$a $c $fetched $FAST_WINDOWS" | awk '{ printf "  own CPU %.2f ms per window (%.2f without the server); %d fetches of both paths: the server adds %.2f ms per window, %.0f us per fetch\n", $2, $1, $3, $2 - $1, ($3 > 0 ? 1000 * ($2 - $1) * $4 / $3 : 0) }'
exit ${rc:-0}
