#!/bin/bash
# Submits the CPI2 jobs to the Flink session cluster, each unless it already runs: the detection
# job (org.cpi2.flink.Cpi2Job, Kafka to Kafka) and the loader (org.cpi2.loader.LoaderJob, every
# topic into ClickHouse). docker-compose.yml runs it once in the flink image, after the jar is
# built and the servers are up.
# Environment: FLINK_JOBMANAGER (host:port of the REST API), CPI2_JOB_JAR, CPI2_JOB_ARGS,
# CPI2_LOADER_ARGS, CPI2_JOB_NAME (default cpi2-flink-jobs), CPI2_LOADER_NAME (default
# cpi2-loader), FLINK (the flink CLI; default flink).
set -euo pipefail

jm=${FLINK_JOBMANAGER:?}
jar=${CPI2_JOB_JAR:?}
flink=${FLINK:-flink}

[[ -f $jar ]] || { echo "flink-submit: no job jar at $jar" >&2; exit 1; }

# submit NAME CLASS ARGS: runs CLASS as job NAME unless a job of that name runs
submit() {
  local name=$1 cls=$2 args=$3
  if "$flink" list -m "$jm" -r 2>/dev/null | grep -q " : $name (RUNNING)"; then
    echo "flink-submit: $name is already running on $jm" >&2
    return 0
  fi
  # shellcheck disable=SC2086  # args is a list of options
  "$flink" run -d -m "$jm" -c "$cls" "$jar" --job.name "$name" $args
}

submit "${CPI2_JOB_NAME:-cpi2-flink-jobs}" org.cpi2.flink.Cpi2Job "${CPI2_JOB_ARGS:-}"
submit "${CPI2_LOADER_NAME:-cpi2-loader}" org.cpi2.loader.LoaderJob "${CPI2_LOADER_ARGS:-}"
