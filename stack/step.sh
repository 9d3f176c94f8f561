#!/usr/bin/env bash
# stack/step.sh WHAT USUALLY CMD [ARG...]: runs one slow setup or build step so that it is never
# silent for minutes: it says what it does and how long it usually takes (USUALLY, '' to say
# nothing), prints the time so far every STEP_TICK seconds (20) while CMD runs, then the time it
# took; exits with CMD's status.
# Lines start with STEP_PREFIX (setup). Sourced (stack/setup.sh does), it only defines step().
#   stack/step.sh "building kube-apiserver" "10 min cold" go build ...

# mmss SECONDS: 75 -> 1m15s, 42 -> 42s
mmss() { if [ "$1" -ge 60 ]; then printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); else printf '%ds' "$1"; fi; }

step() {
  local what="$1" usually="$2" prefix="${STEP_PREFIX:-setup}" t0 tick rc=0
  shift 2
  t0=$(date +%s)
  echo "$prefix: $what${usually:+ (usually $usually)} ..."
  # The ticker kills its own sleep when stopped, so no sleep outlives it holding the output open.
  (
    s=
    trap '[ -n "$s" ] && kill "$s" 2>/dev/null; exit 0' TERM
    while :; do
      sleep "${STEP_TICK:-20}" &
      s=$!
      wait "$s"
      echo "$prefix:   ... $what: $(mmss $(($(date +%s) - t0))) so far"
    done
  ) &
  tick=$!
  "$@" || rc=$?
  kill "$tick" 2>/dev/null
  wait "$tick" 2>/dev/null || true
  if [ "$rc" = 0 ]; then
    echo "$prefix: $what: done in $(mmss $(($(date +%s) - t0)))"
  else
    echo "$prefix: $what: FAILED after $(mmss $(($(date +%s) - t0))) (exit $rc)" >&2
  fi
  return "$rc"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  [ $# -ge 3 ] || { echo "usage: $0 WHAT USUALLY CMD [ARG...]" >&2; exit 2; }
  step "$@"
fi
