#!/usr/bin/env bash
# make status: one line per server: running or not, and answering or not. Exit 0 only if all are healthy.
. "$(dirname "$0")/lib.sh"
bad=0
for s in $SERVERS; do
  if pid="$(running_pid "$s")"; then
    if healthy "$s"; then printf '%-20s healthy   pid %s\n' "$s" "$pid"
    else printf '%-20s STARTING or NOT ANSWERING  pid %s (see %s)\n' "$s" "$pid" "$LOG_DIR/$s.log"; bad=1; fi
  else
    printf '%-20s STOPPED\n' "$s"; bad=1
  fi
done
exit $bad
