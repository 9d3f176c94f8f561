#!/bin/sh
# Collector CPU time per window for 200 cgroups on this machine: 200 cgroups
# /sys/fs/cgroup/unified/cpi2-bench-NNN, each with one sleeping process, counted with task-clock
# (no hardware counters here) for 10 s windows; the collector's own CPU time per window comes
# from its log line (getrusage over the period), and the cost at the default duty cycle is that
# time over the 60 s period. Target: < 0.1% of one CPU. Removes the cgroups afterwards.
# Usage: bench.sh BUILD_DIR
set -eu
BIN=${1:?build dir}/collectors/collector/cpi2-collector
ROOT=/sys/fs/cgroup/unified
N=${BENCH_CGROUPS:-200}
WINDOWS=${BENCH_WINDOWS:-3}
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
	for d in $ROOT/cpi2-bench-*; do [ -d "$d" ] && rmdir "$d" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
i=0
while [ $i -lt "$N" ]; do
	d=$ROOT/$(printf 'cpi2-bench-%03d' $i)
	mkdir -p "$d"
	sh -c "echo \$\$ > $d/cgroup.procs; exec sleep 3600" &
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
	}'
