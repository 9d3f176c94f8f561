#!/usr/bin/env bash
# make bench: run every folder's benchmarks over the real local stack and write one report,
# bench-report/REPORT.md, with the machine's conditions and each benchmark's own output
# (figures beside their targets, as each bench prints them).
. "$(dirname "$0")/lib.sh"
set +e
out="$ROOT/bench-report/REPORT.md"
mkdir -p "$(dirname "$out")"
"$STACK_SRC/status.sh" >/dev/null 2>&1 || "$STACK_SRC/up.sh" || { echo "make bench: the local stack did not come up"; exit 1; }
{
  echo "# CPI² benchmark report"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)"
  echo "- machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(free -g | awk '/Mem:/ {print $2}') GiB memory, $(uname -sr)"
  echo "- shared, noisy machine: compare ratios and rates measured in the same run"
  echo
} > "$out"
rc=0
for m in "$@"; do
  echo "==== $m: make bench ===="
  { echo "## $m"; echo; echo '```'; } >> "$out"
  make --no-print-directory -C "$ROOT/$m" bench 2>&1 | tee -a "$out"
  [ "${PIPESTATUS[0]}" -eq 0 ] || { rc=1; echo "(bench of $m FAILED)" >> "$out"; }
  { echo '```'; echo; } >> "$out"
done
echo "make bench: report written to $out"
exit $rc
