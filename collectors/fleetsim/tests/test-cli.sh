#!/usr/bin/env bash
# The cpi2-fleetsim program end to end, without Kafka: --help, determinism with --seed, sample
# counts, malformed scenarios, the cap loop through a cgroup tree, graceful SIGTERM.
# Usage: test-cli.sh PATH/TO/cpi2-fleetsim SCENARIO_DIR
set -u
BIN=$1
SCN=$2
TMP=$(mktemp -d /tmp/fleetsim-cli-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }
START=1305504000 # 16 May 2011, fixed so runs compare

# --help
"$BIN" --help >"$TMP/help" || fail "--help exit code $?"
grep -q -- "--cgroup-root" "$TMP/help" || fail "--help does not document --cgroup-root"

# determinism: same seed, same bytes; another seed, other bytes
run() { "$BIN" -s case2 --stdout --speed max --warmup 10m --duration 5m --start $START --truth "$TMP/truth-$1" --seed "$1" 2>"$TMP/log-$1"; }
run 7 >"$TMP/a" || fail "run 7 exit $?"
run 7 >"$TMP/b" || fail "run 7 again exit $?"
run 8 >"$TMP/c" || fail "run 8 exit $?"
cmp -s "$TMP/a" "$TMP/b" || fail "same seed gave different samples"
cmp -s "$TMP/a" "$TMP/c" && fail "different seeds gave the same samples"
cmp -s "$TMP/truth-7" "$TMP/truth-8" || true
# 252 tasks x 15 periods (10 min warmup + 5 min)
lines=$(wc -l <"$TMP/a")
[ "$lines" -eq 3780 ] || fail "expected 3780 samples, got $lines"
jq -e -s 'length == 3780 and all(.[]; (.host | type) == "string" and .window_us == 10000000)' "$TMP/a" >/dev/null ||
	fail "samples are not JSON with host and window_us 10 s: $(head -c 400 "$TMP/a")"
# one window per task per minute: every (host, task) has 15 distinct window starts
jq -e -s 'group_by(.host + .task) | all(.[]; (map(.window_start_us) | unique | length) == 15)' "$TMP/a" >/dev/null ||
	fail "not one sample per task per 60 s"
head -1 "$TMP/truth-7" | jq -e '.type == "scenario" and .seed == 7' >/dev/null || fail "truth header: $(head -1 "$TMP/truth-7")"

# malformed scenario: exit 2, "file:line: reason" on stderr, no crash
printf '[scenario]\nname = x\n[platform p]\nghz = fast\n' >"$TMP/bad.scn"
"$BIN" -s "$TMP/bad.scn" --stdout >/dev/null 2>"$TMP/bad.err"
rc=$?
[ $rc -eq 2 ] || fail "malformed scenario: exit $rc, want 2"
grep -q "bad.scn:4: ghz: 'fast' is not a number" "$TMP/bad.err" || fail "malformed scenario message: $(cat "$TMP/bad.err")"
"$BIN" -s nosuchscenario --stdout >/dev/null 2>"$TMP/none.err" && fail "missing scenario accepted"
grep -q "nosuchscenario.scn: No such file" "$TMP/none.err" || fail "missing scenario message: $(cat "$TMP/none.err")"
"$BIN" -s case2 --speed fast --stdout >/dev/null 2>&1 && fail "--speed fast accepted"
"$BIN" -s case2 --flush-timeout -1 --stdout >/dev/null 2>&1 && fail "--flush-timeout -1 accepted"

# -X: up to 64 librdkafka properties (key=value) after the program's own default, linger.ms=50
grep -q "default here: linger.ms=50" "$TMP/help" || fail "--help does not give -X's default"
xs=()
for i in $(seq 64); do xs+=(-X "linger.ms=$i"); done
dry() { "$BIN" -s case2 --dry-run --warmup 0 --duration 1m --start $START --truth none "$@" >/dev/null 2>"$TMP/x.err"; }
dry "${xs[@]}" || fail "64 -X options refused: $(cat "$TMP/x.err")"
dry "${xs[@]}" -X linger.ms=65 && fail "a 65th -X option accepted"
grep -q "at most 64" "$TMP/x.err" || fail "65 -X options: $(cat "$TMP/x.err")"
dry -X linger && fail "-X without = accepted"
# secrets: never with -X (ps shows them), only in the --kafka-client-file, which must be 0600
dry -X sasl.password=hunter2 && fail "-X sasl.password accepted"
grep -q "kafka-client-file" "$TMP/x.err" && ! grep -q hunter2 "$TMP/x.err" || fail "-X sasl.password: $(cat "$TMP/x.err")"
dry -X ssl.key.password=hunter2 && fail "-X ssl.key.password accepted"
printf 'security.protocol=SASL_SSL\nsasl.password=hunter2\n' >"$TMP/client.properties"
chmod 600 "$TMP/client.properties"
dry --kafka-client-file "$TMP/client.properties" "${xs[@]:4}" || fail "a 0600 client file refused: $(cat "$TMP/x.err")"
dry --kafka-client-file "$TMP/client.properties" "${xs[@]}" && fail "a client file and 64 -X options accepted"
chmod 640 "$TMP/client.properties"
dry --kafka-client-file "$TMP/client.properties" && fail "a client file group may read accepted"
grep -q "chmod 600" "$TMP/x.err" || fail "group-readable client file: $(cat "$TMP/x.err")"
grep -q -- "--kafka-client-file" "$TMP/help" || fail "--help does not document --kafka-client-file"

# the cap loop: cap be-crawler/0 through cpu.max while the program runs, then lift it
ROOT="$TMP/cg"
"$BIN" -s case2 --stdout --warmup 0 --duration 60m --speed 1200 --start $START --cgroup-root "$ROOT" \
	--truth "$TMP/truth-cap" >"$TMP/cap.out" 2>"$TMP/cap.log" &
pid=$!
DIR="$ROOT/case2-host/jobs/be-crawler/0"
# the clock file appears once the whole tree is there, just before the first period
for _ in $(seq 200); do [ -f "$ROOT/clock" ] && break; sleep 0.05; done
[ -f "$DIR/cpu.max" ] || fail "no cgroup folder $DIR"
sleep 0.75 # ~15 simulated minutes at speed 1200
echo "1000 100000" >"$DIR/cpu.max"
sleep 0.75
echo "max 100000" >"$DIR/cpu.max"
wait $pid || fail "cap run exit $?"
# the simulated clock for enforcers: the end of the run (start + 60 min)
[ "$(cat "$ROOT/clock" 2>/dev/null)" = "$(((START + 3600) * 1000000))" ] || fail "clock file: '$(cat "$ROOT/clock" 2>/dev/null)'"
grep -q '"type":"cap".*be-crawler/0.*"cap":0.0100' "$TMP/truth-cap" || fail "no cap line in truth: $(cat "$TMP/truth-cap" | tail -3)"
grep -q '"type":"uncap".*be-crawler/0' "$TMP/truth-cap" || fail "no uncap line in truth"
# usage <= 0.01 while capped; the victim's CPI while capped is well below before
jq -s -e '
  (map(select(.host == "case2-host" and .task == "jobs/be-crawler/0"))) as $a |
  (map(select(.host == "case2-host" and .task == "jobs/query-serving/0"))) as $v |
  ($a | map(select(.cpu_usage <= 0.01)) | map(.window_start_us)) as $capped |
  ($v | map(select(.window_start_us < $capped[0]))) as $before |
  ($capped | length) >= 5 and ($before | length) >= 5 and
  (($v | map(select(.window_start_us as $t | $capped | index($t))) | map(.cpi) | add / length) <
   0.7 * ($before | map(.cpi) | add / length)) and
  ($a[-6:] | map(.cpu_usage) | add / length > 1)' "$TMP/cap.out" >/dev/null ||
	fail "cap did not lower the antagonist's usage and the victim's CPI (see $TMP/cap.out)"

# graceful stop on SIGTERM
"$BIN" -s steady --dry-run --speed 1 --duration inf --truth none 2>"$TMP/term.log" &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 0 ] || fail "SIGTERM: exit $rc"
grep -q "stopped" "$TMP/term.log" || fail "SIGTERM: no final line: $(cat "$TMP/term.log")"

if [ $failures -ne 0 ]; then
	trap - EXIT
	echo "test-cli: FAILED ($failures), files kept in $TMP" >&2
	exit 1
fi
echo "test-cli: ok" >&2
