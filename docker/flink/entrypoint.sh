#!/bin/bash
# The Flink image's entrypoint (cpi2/flink-jobs: Flink 2.2.1's jars from Maven Central, the job
# jar at /opt/flink/usrlib/cpi2-flink-jobs.jar).
#   jobmanager        a session cluster's JobManager (docker-compose.yml)
#   taskmanager       a TaskManager (jobmanager.rpc.address names its JobManager)
#   flink ARGS...     Flink's CLI: run, list, stop, cancel, savepoint ... (also /usr/local/bin/flink)
#   other ARGS...     run as given
# FLINK_PROPERTIES: "key: value" lines that replace those keys of conf/config.yaml (flat keys), as
# in Flink's own image. FLINK_CONF_DIR: the configuration folder (default /opt/flink/conf).
set -euo pipefail
FLINK_HOME=${FLINK_HOME:-/opt/flink}
conf=${FLINK_CONF_DIR:-$FLINK_HOME/conf}
cp_lib="$FLINK_HOME/lib/*"

# The configuration with FLINK_PROPERTIES applied, in a folder of its own under /tmp.
if [ -n "${FLINK_PROPERTIES:-}" ]; then
  out=$(mktemp -d /tmp/flink-conf.XXXXXX)
  cp "$conf"/* "$out/"
  while IFS= read -r line; do
    key=${line%%:*}
    key=$(echo "$key" | tr -d '[:space:]')
    [ -n "$key" ] && [ "${key:0:1}" != "#" ] || continue
    grep -v -F -e "$key:" "$out/config.yaml" > "$out/config.yaml.new" || true
    mv "$out/config.yaml.new" "$out/config.yaml"
    echo "$line" >> "$out/config.yaml"
  done <<< "$FLINK_PROPERTIES"
  conf=$out
fi

mapfile -t jvm_opts < "$FLINK_HOME/conf/jvm-opts"
log=(-Dlog4j.configurationFile="$conf/log4j-console.properties" -Dlog4j2.configurationFile="$conf/log4j-console.properties")

# Flink's memory calculator (what flink-dist's scripts run): JVM options, then dynamic options.
params() {
  java -cp "$cp_lib" org.apache.flink.runtime.util.bash.BashJavaUtils "$1" --configDir "$conf" "${@:2}" 2>&1 \
    | sed -n 's/^BASH_JAVA_UTILS_EXEC_RESULT://p'
}

case "${1:-}" in
  jobmanager)
    shift
    jvm=$(params GET_JM_RESOURCE_PARAMS "$@" | sed -n 1p)
    [ -n "$jvm" ] || { echo "entrypoint: Flink could not size the JobManager from $conf/config.yaml" >&2; exit 1; }
    # shellcheck disable=SC2086
    exec java $jvm "${jvm_opts[@]}" "${log[@]}" -cp "$cp_lib" \
      org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint --configDir "$conf" --executionMode cluster "$@" ;;
  taskmanager)
    shift
    out=$(params GET_TM_RESOURCE_PARAMS "$@")
    jvm=$(echo "$out" | sed -n 1p); dyn=$(echo "$out" | sed -n 2p)
    [ -n "$jvm" ] || { echo "entrypoint: Flink could not size the TaskManager from $conf/config.yaml" >&2; exit 1; }
    # shellcheck disable=SC2086
    exec java $jvm "${jvm_opts[@]}" "${log[@]}" -cp "$cp_lib" \
      org.apache.flink.runtime.taskexecutor.TaskManagerRunner --configDir "$conf" $dyn "$@" ;;
  flink)
    shift
    export FLINK_CONF_DIR=$conf
    exec java "${jvm_opts[@]}" -Dlog4j.configurationFile="$conf/log4j-cli.properties" -Dlog4j2.configurationFile="$conf/log4j-cli.properties" \
      -cp "$cp_lib" org.apache.flink.client.cli.CliFrontend "$@" ;;
  *)
    exec "$@" ;;
esac
