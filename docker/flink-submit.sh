#!/bin/bash
# Submits the CPI2 jobs to the Flink session cluster, each unless it already runs: the detection
# job (org.cpi2.flink.Cpi2Job, Kafka to Kafka) and the loader (org.cpi2.loader.LoaderJob, every
# topic into ClickHouse). docker-compose.yml runs it once in the flink image, after the jar is
# built and the servers are up. A job resumes from its latest savepoint when one exists: the
# newest folder under $CPI2_SAVEPOINT_DIR/<job name> that holds a savepoint's _metadata.
#
#   flink-submit.sh          submit each job not running (from its latest savepoint, if any)
#   flink-submit.sh stop     stop each running job with a savepoint into $CPI2_SAVEPOINT_DIR/<job name>
#
# Environment: FLINK_JOBMANAGER (host:port of the REST API), CPI2_JOB_JAR, CPI2_JOB_ARGS,
# CPI2_LOADER_ARGS, CPI2_JOB_NAME (default cpi2-flink-jobs), CPI2_LOADER_NAME (default
# cpi2-loader), CPI2_SAVEPOINT_DIR (default /opt/flink/state/savepoints, the savepoint folder of
# the JobManager's volume), FLINK (the flink CLI; default flink).
set -euo pipefail

jm=${FLINK_JOBMANAGER:?}
flink=${FLINK:-flink}
savepoints=${CPI2_SAVEPOINT_DIR:-/opt/flink/state/savepoints}
job_name=${CPI2_JOB_NAME:-cpi2-flink-jobs}
loader_name=${CPI2_LOADER_NAME:-cpi2-loader}

# running_id NAME: the id of the running job called NAME, or nothing
# (flink list -r prints "<date> <time> : <job id> : <name> (RUNNING)")
running_id() {
  "$flink" list -m "$jm" -r 2>/dev/null | awk -v n="$1" -F' : ' '$3 == n " (RUNNING)" { print $2; exit }'
}

# latest_savepoint NAME: the newest savepoint of job NAME (a folder with _metadata), or nothing
latest_savepoint() {
  local dir="$savepoints/$1"
  [[ -d $dir ]] || return 0
  find "$dir" -mindepth 2 -maxdepth 2 -name _metadata -printf '%T@ %h\n' 2>/dev/null | sort -n | tail -n 1 | cut -d' ' -f2-
}

# submit NAME CLASS ARGS: runs CLASS as job NAME unless a job of that name runs
submit() {
  local name=$1 cls=$2 args=$3 from
  if [[ -n $(running_id "$name") ]]; then
    echo "flink-submit: $name is already running on $jm" >&2
    return 0
  fi
  from=$(latest_savepoint "$name")
  if [[ -n $from ]]; then
    echo "flink-submit: $name resumes from savepoint $from" >&2
    # shellcheck disable=SC2086  # args is a list of options
    "$flink" run -d -m "$jm" -s "$from" -c "$cls" "$jar" --job.name "$name" $args
  else
    # shellcheck disable=SC2086
    "$flink" run -d -m "$jm" -c "$cls" "$jar" --job.name "$name" $args
  fi
}

# stop NAME: stops the running job NAME with a savepoint into its folder
stop() {
  local name=$1 id
  id=$(running_id "$name")
  if [[ -z $id ]]; then
    echo "flink-submit: $name is not running on $jm" >&2
    return 0
  fi
  "$flink" stop -m "$jm" --savepointPath "$savepoints/$name" "$id"
}

case "${1:-submit}" in
  submit)
    jar=${CPI2_JOB_JAR:?}
    [[ -f $jar ]] || { echo "flink-submit: no job jar at $jar" >&2; exit 1; }
    submit "$job_name" org.cpi2.flink.Cpi2Job "${CPI2_JOB_ARGS:-}"
    submit "$loader_name" org.cpi2.loader.LoaderJob "${CPI2_LOADER_ARGS:-}"
    ;;
  stop)
    stop "$job_name"
    stop "$loader_name"
    ;;
  *)
    echo "usage: flink-submit.sh [submit|stop]" >&2
    exit 2
    ;;
esac
