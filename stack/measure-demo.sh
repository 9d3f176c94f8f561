#!/usr/bin/env bash
# stack/measure-demo.sh [REPORT]: how long `make demo` takes cold and warm, measured on a fresh
# clone of this checkout's HEAD with every cache the setup uses pointed at empty folders of its
# own (Maven's local repository, the Go module and build caches, pip's cache; the clone has no
# .venv and no .stack), then once more warm. Debian's packages stay as they are: removing them
# would break every other user of the machine, so "cold" here means everything but apt.
# The shared caches (~/.m2, ~/go, ~/.cache) are never touched. Writes REPORT
# (default bench-report/setup-tiers.md) with the conditions and both times, and beside it
# demo-report.png: the cold run's HTML report as headless Chromium draws it.
#
# The clone's stack uses STACK_ENV's ports (default stack/stack.env): stop any stack on them first.
# Needs about 20 minutes and 3 GB of disk under TMPDIR.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
report="$(realpath -m "${1:-$here/bench-report/setup-tiers.md}")"
env_file="$(realpath "${STACK_ENV:-$here/stack/stack.env}")"
work="$(mktemp -d "${TMPDIR:-/tmp}/cpi2-measure-demo-XXXXXX")"
clone="$work/cpi2"
commit="$(git -C "$here" rev-parse --short HEAD)"

git clone -q "$here" "$clone"
git -C "$clone" checkout -q "$commit"
mkdir -p "$work/m2" "$work/gomod" "$work/gocache" "$work/pip"
export MAVEN_OPTS="-Dmaven.repo.local=$work/m2" GOMODCACHE="$work/gomod" GOCACHE="$work/gocache"
export PIP_CACHE_DIR="$work/pip" STACK_ENV="$env_file"

load() { cut -d' ' -f1-3 /proc/loadavg; }

# run LABEL: make demo in the clone, its output in $work/LABEL.log; prints the seconds it took
run() {
  local t0 rc=0
  t0=$(date +%s)
  (cd "$clone" && make demo) > "$work/$1.log" 2>&1 || rc=$?
  echo "$1: make demo exited $rc after $(($(date +%s) - t0)) s (log $work/$1.log)" >&2
  [ "$rc" = 0 ] || { tail -30 "$work/$1.log" >&2; exit 1; }
  echo $(($(date +%s) - t0))
}

# step_times LOG: the setup and build steps' own times, from their "done in" lines (Maven's colour
# escapes cut first: they start some of those lines)
step_times() { sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -E '^(setup|build|stack): .*(done in|setup done)' | sed 's/^/    /' || true; }

# shoot LOG: a screenshot of the HTML report the demo of LOG wrote (headless Chromium), next to REPORT
shot="$(dirname "$report")/demo-report.png"
shoot() {
  local html
  html="$(grep -o 'file://[^ ]*cpi2-report\.html' "$1" | tail -1 | sed 's|^file://||')"
  [ -n "$html" ] || { echo "no HTML report named in $1" >&2; return 1; }
  mkdir -p "$(dirname "$shot")"
  "$clone/.venv/bin/python" -c 'import sys; from cpi2.testing import browser
print(browser.screenshot_page(sys.argv[1], sys.argv[2], sys.argv[3]))' "$html" "$shot" "$work/chromium"
}

load0="$(load)"
cold="$(run cold)"
load1="$(load)"
shot_height="$(shoot "$work/cold.log" || echo none)"
warm="$(run warm)"
load2="$(load)"
(cd "$clone" && make down) > "$work/down.log" 2>&1 || true

mkdir -p "$(dirname "$report")"
{
  echo "# make demo, cold and warm"
  echo
  echo "Measured by \`stack/measure-demo.sh\` on $(date -u +%Y-%m-%dT%H:%MZ), commit $commit, $(nproc) cores,"
  echo "$(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo) memory, $(. /etc/os-release && echo "$PRETTY_NAME"), STACK_ENV $(basename "$env_file")."
  echo "Cold: a fresh clone, empty Maven repository, Go module and build caches and pip cache, no"
  echo "\`.venv\`, no \`.stack/\`; Debian's packages installed (they cannot be moved aside on a shared"
  echo "machine). Warm: \`make demo\` again in the same clone (its stack still up)."
  echo
  echo "| run | seconds | minutes | load average before |"
  echo "|---|---|---|---|"
  awk -v c="$cold" -v l="$load0" 'BEGIN { printf "| cold | %d | %.1f | %s |\n", c, c / 60, l }'
  awk -v c="$warm" -v l="$load1" 'BEGIN { printf "| warm | %d | %.1f | %s |\n", c, c / 60, l }'
  echo
  echo "Load average after: $load2."
  echo
  echo "Steps of the cold run:"
  echo
  step_times "$work/cold.log"
  echo
  echo "Steps of the warm run:"
  echo
  step_times "$work/warm.log"
  echo
  echo "The demo's own last lines (cold run):"
  echo
  grep -E 'The demo took|panels with data|most severe incident' "$work/cold.log" | sed 's/^/    /' || true
  echo
  if [ "$shot_height" != none ]; then
    echo "The cold run's HTML report as headless Chromium drew it (1600 x $shot_height px):"
    echo "[$(basename "$shot")]($(basename "$shot"))."
  else
    echo "No screenshot of the report: see the output of stack/measure-demo.sh."
  fi
} > "$report"
echo "wrote $report; the clone and its logs stay in $work (rm -rf it when done)"
