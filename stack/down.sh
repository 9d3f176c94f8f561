#!/usr/bin/env bash
# make down: stop exactly the processes `make up` started, by the PIDs it recorded
# (SIGTERM, then SIGKILL after a bound). State under .stack/ is kept for the next `make up`.
. "$(dirname "$0")/lib.sh"

# stop NAME...: TERM every named server that runs, then wait for all of them together (members
# of a cluster stop at once: Kafka nodes stopping one by one would leave the last without a
# controller quorum to shut down with).
stop() {
  local name pid t=0 pids=() names=()
  for name in "$@"; do
    if pid="$(running_pid "$name")"; then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid"); names+=("$name")
    else
      rm -f "$(pidfile "$name")"
    fi
  done
  local i left=1
  while [ "$left" = 1 ]; do
    left=0
    for i in "${!pids[@]}"; do kill -0 "${pids[i]}" 2>/dev/null && left=1; done
    [ "$left" = 1 ] || break
    if [ "$t" -ge 60 ]; then
      for i in "${!pids[@]}"; do
        if kill -0 "${pids[i]}" 2>/dev/null; then
          say "${names[i]} (pid ${pids[i]}) did not stop within 30s: killing it"
          kill -KILL "${pids[i]}" 2>/dev/null || true
        fi
      done
      break
    fi
    sleep 0.5; t=$((t + 1))
  done
  for i in "${!pids[@]}"; do
    rm -f "$(pidfile "${names[i]}")"
    say "stopped ${names[i]} (pid ${pids[i]})"
  done
}

# Reverse start order: producers first, then the servers they talk to.
stop telegraf
# shellcheck disable=SC2046
stop $(members flink-taskmanager "$FLINK_TASKMANAGERS")
stop flink-jobmanager
# shellcheck disable=SC2046
stop $(members kafka "$KAFKA_BROKERS")
stop clickhouse
if declare -F stop_clickhouse_cluster >/dev/null; then stop_clickhouse_cluster; fi
rm -f "$RUN_DIR/kafka.topics-ok"
