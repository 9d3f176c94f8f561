#!/bin/bash
# Submits the CPI2 job to the Flink session cluster unless it already runs (docker-compose.yml
# runs it once in the flink image, after the jar is built and the servers are up).
# Environment: FLINK_JOBMANAGER (host:port of the REST API), CPI2_JOB_JAR, CPI2_JOB_ARGS,
# CPI2_JOB_NAME (default cpi2-flink-jobs), FLINK (the flink CLI; default flink).
set -euo pipefail

jm=${FLINK_JOBMANAGER:?}
jar=${CPI2_JOB_JAR:?}
name=${CPI2_JOB_NAME:-cpi2-flink-jobs}
flink=${FLINK:-flink}

[[ -f $jar ]] || { echo "flink-submit: no job jar at $jar" >&2; exit 1; }
if "$flink" list -m "$jm" -r 2>/dev/null | grep -q " : $name (RUNNING)"; then
  echo "flink-submit: $name is already running on $jm" >&2
  exit 0
fi
# shellcheck disable=SC2086  # CPI2_JOB_ARGS is a list of options
exec "$flink" run -d -m "$jm" -c org.cpi2.flink.Cpi2Job "$jar" ${CPI2_JOB_ARGS:-}
