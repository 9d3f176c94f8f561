#!/usr/bin/env bash
# flink-rest.sh: submit, stop with a savepoint, and show the CPI² jobs on the local Flink session
# cluster through its REST API (no Flink distribution needed, only curl and jq): the detection job
# (org.cpi2.flink.Cpi2Job, Kafka to Kafka) and the loader (org.cpi2.loader.LoaderJob, every
# topic into ClickHouse).
#   flink-rest.sh submit JAR SAVEPOINT_OR_EMPTY [job options...]
#       the detection job, then the loader beside it: options --clickhouse.* are the loader's (an
#       empty --clickhouse.url: no loader; none: the loader when cpi2.incidents exists); the
#       loader also gets --checkpoint.interval-ms (not the job's parallelism: one task per topic
#       leaves the cores to detection), and the consumer group
#       cpi2-loader-X for the job's cpi2-flink-X. It resumes from its group's offsets; a new group
#       starts at the records from now on, or where the job's --kafka.start earliest or
#       timestamp-ms:MS says (the loader alone, with --kafka.start committed-or-earliest, stores
#       all that Kafka holds). A loader already running with the same options is kept (it
#       resumes nothing twice).
#   flink-rest.sh loader JAR [loader options...]   (re)start the loader alone
#   flink-rest.sh stop        stop the running detection job with a savepoint into $STACK_DIR/savepoints
#   flink-rest.sh status
# Environment (from mk/common.mk): STACK_DIR, STACK_HOST, FLINK_REST_PORT, KAFKA_PORT, CLICKHOUSE_HTTP_PORT;
# of the multi-node profile (stack/multi.env): KAFKA_BROKERS (the job and the loader are given
# every broker), JOB_PARALLELISM and KAFKA_DELIVERY (the detection job's --job.parallelism and
# --kafka.delivery, unless its options give them).
set -euo pipefail

FLINK_URL="http://${STACK_HOST:-127.0.0.1}:${FLINK_REST_PORT:-8081}"
CLICKHOUSE_URL="http://${STACK_HOST:-127.0.0.1}:${CLICKHOUSE_HTTP_PORT:-8123}"
JOB_NAME=${JOB_NAME:-cpi2-flink-jobs}
LOADER_NAME=${LOADER_NAME:-cpi2-loader}
STATE="${STACK_DIR:?}/flink-jobs"
# Every broker of the stack: broker i listens on KAFKA_PORT+2i (stack/lib.sh's kafka_bootstrap)
KAFKA_BOOTSTRAP=""
for ((i = 0; i < ${KAFKA_BROKERS:-1}; i++)); do
  KAFKA_BOOTSTRAP="$KAFKA_BOOTSTRAP${KAFKA_BOOTSTRAP:+,}${STACK_HOST:-127.0.0.1}:$((${KAFKA_PORT:-9092} + 2 * i))"
done
SAVEPOINTS="${STACK_DIR}/savepoints"

die() { echo "flink-jobs: $*" >&2; exit 1; }
log() { echo "flink-jobs: $*" >&2; }

# POST with a JSON body; prints the response, fails with the response on an HTTP error.
post_json() {
  local url=$1 body=$2 out code
  out=$(curl -s -w '\n%{http_code}' -X POST -H 'Content-Type: application/json' -d "$body" "$url") || die "POST $url: no answer"
  code=${out##*$'\n'}
  out=${out%$'\n'*}
  [[ $code == 2* ]] || die "POST $url: HTTP $code: $out"
  printf '%s' "$out"
}

require_flink() {
  curl -sf "$FLINK_URL/config" >/dev/null || die "no Flink REST API at $FLINK_URL (start the stack: make -C ${ROOT:-..} up)"
}

# running_job [NAME]: the id of the running job of that name (default the detection job's)
running_job() {
  curl -sf "$FLINK_URL/jobs/overview" |
    jq -r --arg n "${1:-$JOB_NAME}" '.jobs[] | select(.name == $n and (.state == "RUNNING" or .state == "CREATED" or .state == "INITIALIZING" or .state == "RESTARTING")) | .jid' | head -1
}

# upload JAR: the jar's id on the cluster
upload() {
  local up id
  up=$(curl -s -X POST -F "jarfile=@$1" "$FLINK_URL/jars/upload") || die "upload of $1 failed"
  id=$(jq -r '.filename // empty' <<<"$up")
  [[ -n $id ]] || die "upload of $1 refused: $up"
  echo "${id##*/}"
}

# the client file of a principal: only its path goes into a job, not its password; the detector
# also checks the hosts' signatures with the stack's master keys (stack/kafka/make-secrets.sh)
client_args() {
  local client="$STACK_DIR/secrets/kafka-$1.properties"
  [[ -f $client ]] && echo "--kafka.client-file"$'\n'"$client"
  [[ $1 == detector && -f $STACK_DIR/secrets/host-keys ]] && echo "--kafka.host-keys"$'\n'"$STACK_DIR/secrets/host-keys"
  return 0
}

# loader JAR [options]: (re)starts the loader with these options, unless it runs with them already
loader() {
  local jar=$1
  shift
  require_flink
  [[ -f $jar ]] || die "no job jar at $jar (make build)"
  local args=(--kafka.bootstrap "$KAFKA_BOOTSTRAP" --job.name "$LOADER_NAME")
  mapfile -t -O ${#args[@]} args < <(client_args loader)
  args+=("$@")
  local jid want
  want=$(printf '%s\n' "${args[@]}")
  jid=$(running_job "$LOADER_NAME")
  mkdir -p "$STATE"
  if [[ -n $jid && -f $STATE/loader-args && $(cat "$STATE/loader-args") == "$want" ]]; then
    log "loader $jid already running with these options"
    return 0
  fi
  if [[ -n $jid ]]; then
    curl -sf -X PATCH "$FLINK_URL/jobs/$jid?mode=cancel" >/dev/null || die "cannot cancel loader $jid"
    for _ in $(seq 1 60); do
      [[ $(curl -sf "$FLINK_URL/jobs/$jid" | jq -r '.state') == CANCELED ]] && break
      sleep 1
    done
    log "loader $jid canceled (its offsets are those of its last checkpoint)"
  fi
  local id
  id=$(upload "$jar")
  run_jar "$id" org.cpi2.loader.LoaderJob "" "${args[@]}" >/dev/null
  printf '%s\n' "$want" >"$STATE/loader-args"
}

# loader_options DETECTION_OPTIONS...: the loader's options for a detection job's, one a line;
# nothing when there is to be no loader
loader_options() {
  local url="" have_url=0 group=cpi2-flink-jobs start=committed-or-latest out=()
  while [[ $# -ge 2 ]]; do
    case $1 in
      --clickhouse.url) url=$2; have_url=1 ;;
      --clickhouse.*) out+=("$1" "$2") ;;
      --kafka.group) group=$2 ;;
      --kafka.start) [[ $2 == earliest ]] && start=committed-or-earliest
        [[ $2 == timestamp-ms:* ]] && start=$2 ;;
      --checkpoint.interval-ms) out+=("$1" "$2") ;;
    esac
    shift 2
  done
  if [[ $have_url == 0 ]]; then
    if [[ $(curl -s "$CLICKHOUSE_URL/?query=EXISTS%20TABLE%20cpi2.incidents" 2>/dev/null) == 1 ]]; then
      url=$CLICKHOUSE_URL
    else
      log "no cpi2.incidents table in ClickHouse at $CLICKHOUSE_URL: no loader"
    fi
  fi
  [[ -n $url ]] || return 0
  printf '%s\n' --clickhouse.url "$url" --kafka.group "cpi2-loader-${group#cpi2-flink-}" --kafka.start "$start" "${out[@]}"
}

submit() {
  local jar=$1 savepoint=$2
  shift 2
  require_flink
  [[ -f $jar ]] || die "no job jar at $jar (make build)"
  local jid
  jid=$(running_job)
  [[ -z $jid ]] || die "job $jid is already running; make -C flink-jobs stop (a savepoint, then cancel) first"
  local args=(--kafka.bootstrap "$KAFKA_BOOTSTRAP") loader_args
  mapfile -t -O ${#args[@]} args < <(client_args detector)
  [[ -z ${JOB_PARALLELISM:-} || " $* " == *" --job.parallelism "* ]] || args+=(--job.parallelism "$JOB_PARALLELISM")
  [[ -z ${KAFKA_DELIVERY:-} || " $* " == *" --kafka.delivery "* ]] || args+=(--kafka.delivery "$KAFKA_DELIVERY")
  mapfile -t loader_args < <(loader_options "$@")
  while [[ $# -ge 2 ]]; do
    [[ $1 == --clickhouse.* ]] || args+=("$1" "$2")
    shift 2
  done
  args+=("$@")
  local id
  id=$(upload "$jar")
  jid=$(run_jar "$id" org.cpi2.flink.Cpi2Job "$savepoint" "${args[@]}")
  echo "$jid" >"$STATE/job-id"
  if [[ ${#loader_args[@]} -gt 0 ]]; then
    loader "$jar" "${loader_args[@]}"
  fi
  echo "$jid"
}

# run_jar JAR_ID ENTRY_CLASS SAVEPOINT_OR_EMPTY ARGS...: runs it; prints the job id once RUNNING
run_jar() {
  local id=$1 cls=$2 savepoint=$3
  shift 3
  local args=("$@") jid
  local body argv
  argv=$(printf '%s\n' "${args[@]}" | jq -R . | jq -sc .) # jq 1.6 reads --x after --args as options
  body=$(jq -n --arg cls "$cls" --arg sp "$savepoint" --argjson argv "$argv" '{
      entryClass: $cls,
      programArgsList: $argv,
      allowNonRestoredState: false
    } + (if $sp == "" then {} else {savepointPath: $sp} end)')
  log "running $cls ${savepoint:+from savepoint $savepoint }with: ${args[*]}"
  jid=$(post_json "$FLINK_URL/jars/$id/run" "$body" | jq -r '.jobid')
  mkdir -p "$STATE"
  # RUNNING once every task runs, not only the job: a task may initialize for a minute (a
  # transactional sink's producers, --kafka.delivery exactly-once), and until then the job takes
  # no checkpoint and writes nothing.
  [[ -n $jid && $jid != null ]] || die "the run of $cls gave no job id"
  for _ in $(seq 1 180); do
    local st
    st=$(curl -sf "$FLINK_URL/jobs/$jid" | jq -r '.state + " " + ([.vertices[].status] | all(. == "RUNNING" or . == "FINISHED") | tostring)')
    case $st in
      "RUNNING true") log "job $jid is RUNNING, every task"; echo "$jid"; return 0 ;;
      FAILED* | CANCELED* | FINISHED*) die "job $jid is ${st% *}: $(curl -sf "$FLINK_URL/jobs/$jid/exceptions" | jq -r '.["root-exception"] // empty' | head -5)" ;;
    esac
    sleep 1
  done
  die "job $jid did not have every task RUNNING within 180 s"
}

stop() {
  require_flink
  local jid trig
  jid=$(running_job)
  [[ -n $jid ]] || die "no running $JOB_NAME job on $FLINK_URL"
  mkdir -p "$SAVEPOINTS" "$STATE"
  trig=$(post_json "$FLINK_URL/jobs/$jid/stop" "{\"targetDirectory\": \"file://$SAVEPOINTS\", \"drain\": false}" | jq -r '.["request-id"]')
  log "stopping job $jid with a savepoint into $SAVEPOINTS (trigger $trig)"
  for _ in $(seq 1 120); do
    local r st
    r=$(curl -sf "$FLINK_URL/jobs/$jid/savepoints/$trig")
    st=$(jq -r '.status.id' <<<"$r")
    if [[ $st == COMPLETED ]]; then
      local loc
      loc=$(jq -r '.operation.location // empty' <<<"$r")
      [[ -n $loc ]] || die "savepoint failed: $(jq -c '.operation["failure-cause"]' <<<"$r" | cut -c1-2000)"
      echo "$loc" >"$STATE/last-savepoint"
      log "savepoint $loc"
      echo "$loc"
      return 0
    fi
    sleep 1
  done
  die "savepoint of job $jid did not complete within 120 s"
}

status() {
  require_flink
  curl -sf "$FLINK_URL/jobs/overview" | jq -r --arg n "$JOB_NAME" --arg l "$LOADER_NAME" '.jobs[] | select(.name == $n or .name == $l) | "\(.name) \(.jid) \(.state) started \(.["start-time"] / 1000 | todate)"'
  [[ -f $STATE/last-savepoint ]] && echo "last savepoint: $(cat "$STATE/last-savepoint")"
  return 0
}

cmd=${1:-}
shift || true
case $cmd in
  submit) [[ $# -ge 2 ]] || die "usage: flink-rest.sh submit JAR SAVEPOINT_OR_EMPTY [job options...]"
    submit "$@" ;;
  loader) [[ $# -ge 1 ]] || die "usage: flink-rest.sh loader JAR [loader options...]"; loader "$@" ;;
  stop) stop ;;
  status) status ;;
  *) die "usage: flink-rest.sh submit|loader|stop|status (see the first lines of $0)" ;;
esac
