#!/usr/bin/env bash
# make down: stop exactly the processes `make up` started, by the PIDs it recorded
# (SIGTERM, then SIGKILL after a bound). State under .stack/ is kept for the next `make up`.
. "$(dirname "$0")/lib.sh"

stop() {
  local name="$1" pid t=0
  if ! pid="$(running_pid "$name")"; then
    rm -f "$(pidfile "$name")"; return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$t" -ge 30 ]; then
      say "$name (pid $pid) did not stop within 30s: killing it"
      kill -KILL "$pid" 2>/dev/null || true; break
    fi
    sleep 0.5; t=$((t + 1))
  done
  rm -f "$(pidfile "$name")"
  say "stopped $name (pid $pid)"
}

# Reverse start order: producers first, then the servers they talk to.
for s in telegraf flink-taskmanager flink-jobmanager kafka clickhouse; do stop "$s"; done
rm -f "$RUN_DIR/kafka.topics-ok"
