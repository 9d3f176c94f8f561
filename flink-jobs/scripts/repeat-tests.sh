#!/usr/bin/env bash
# repeat-tests.sh N [CLASS_REGEX]: runs flink-jobs' tests N times in a row, each run in a JVM of
# its own (as Maven's test fork is), and stops at the first failure; `make test REPEAT=N
# TESTS=REGEX` calls it after compiling the tests. CLASS_REGEX selects test classes by their fully
# qualified name (JUnit's --include-classname; default every test class, the stack tests too:
# they need `make -C .. up`), e.g. '.*(Cpi2Job|SavepointFixture)IT'.
# Each run's output goes to target/repeat/run-I.log; a passing run's log is removed, a failing
# run's is kept and its failures are printed. The summary gives the runs passed and their times.
set -euo pipefail

n=${1:?usage: repeat-tests.sh N [CLASS_REGEX]}
regex=${2:-}
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "repeat-tests.sh: N must be a positive integer, got '$n'" >&2; exit 2; }
[[ -n $regex ]] || regex='.*(Test|IT)$'

cd "$(dirname "$0")/.." # tests read their resources relative to flink-jobs/, as under Maven
[[ -s target/bench.classpath && -d target/test-classes ]] ||
  { echo "repeat-tests.sh: no compiled tests; run it through make test REPEAT=N" >&2; exit 2; }
cp="target/test-classes:target/classes:$(cat target/bench.classpath)"
out=target/repeat
mkdir -p "$out"
rm -f "$out"/run-*.log

# The classes the pattern selects, so that a pattern matching nothing fails instead of passing.
found=$(cd target/test-classes && find . -name '*.class' ! -name '*$*' | sed 's|^\./||; s|\.class$||; s|/|.|g' |
  grep -E -x -- "$regex" | sort || true)
[[ -n $found ]] || { echo "repeat-tests.sh: no test class matches '$regex'" >&2; exit 2; }
echo "repeat-tests.sh: $n runs of $(echo "$found" | wc -l) classes matching '$regex':" $found

# sec MS: milliseconds as seconds with one decimal
sec() { printf '%d.%d' $(($1 / 1000)) $((($1 % 1000) / 100)); }
times=()
for ((i = 1; i <= n; i++)); do
  log="$out/run-$i.log"
  start=$(date +%s%N)
  set +e
  java -cp "$cp" org.junit.platform.console.ConsoleLauncher execute --disable-banner \
    --details=summary --disable-ansi-colors --fail-if-no-tests \
    --scan-classpath target/test-classes --include-classname "$regex" >"$log" 2>&1
  rc=$?
  set -e
  ms=$((($(date +%s%N) - start) / 1000000))
  secs=$(sec "$ms")
  times+=("$ms")
  tests=$(grep -Eo '[0-9]+ tests successful' "$log" | head -1 || true)
  if [[ $rc -ne 0 ]]; then
    echo "run $i/$n: FAILED after $secs s ($tests); log: $PWD/$log"
    sed -n '/^Failures (/,/^Test run finished/p' "$log" | grep -v -E '^\s+(org\.junit|java\.base)' | head -60
    echo "repeat-tests.sh: $((i - 1)) runs in a row passed before run $i failed"
    exit 1
  fi
  echo "run $i/$n: passed in $secs s ($tests)"
  rm -f "$log"
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
echo "repeat-tests.sh: $n runs in a row passed; seconds per run: min $(sec "$(echo "$sorted" | head -1)")," \
  "median $(sec "$(echo "$sorted" | sed -n "$(((n + 1) / 2))p")"), max $(sec "$(echo "$sorted" | tail -1)")"
