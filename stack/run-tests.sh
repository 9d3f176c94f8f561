#!/usr/bin/env bash
# make test: bring the local stack up (tests use the real servers), run every folder's tests,
# go on past a failing folder so one run shows everything, then print one summary.
# In CI (CI=true) the stack is stopped afterwards if this run started it.
. "$(dirname "$0")/lib.sh"
set +e

started=0
if ! "$STACK_SRC/status.sh" >/dev/null 2>&1; then
  "$STACK_SRC/up.sh" || { echo "make test: the local stack did not come up (see above)"; exit 1; }
  started=1
fi

passed=() failed=()
t0=$(date +%s)
for m in "$@"; do
  echo "==== $m: make test ===="
  s=$(date +%s)
  if make --no-print-directory -C "$ROOT/$m" test; then
    passed+=("$m ($(( $(date +%s) - s ))s)")
  else
    failed+=("$m ($(( $(date +%s) - s ))s)")
  fi
done

echo
echo "==== test summary ($(( $(date +%s) - t0 ))s) ===="
for p in "${passed[@]}"; do echo "  passed: $p"; done
for f in "${failed[@]}"; do echo "  FAILED: $f"; done
if [ "$started" = 1 ] && [ "${CI:-}" = true ]; then "$STACK_SRC/down.sh"; fi
echo "${#passed[@]} passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
