#!/usr/bin/env bash
# make logs: the last lines of every server's log (N=50 by default: make logs N=200).
. "$(dirname "$0")/lib.sh"
for s in $SERVERS; do
  f="$LOG_DIR/$s.log"
  [ -f "$f" ] || continue
  echo "==> $f <=="
  tail -n "${N:-50}" "$f"
done
