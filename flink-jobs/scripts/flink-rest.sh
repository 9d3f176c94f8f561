#!/usr/bin/env bash
# flink-rest.sh: submit, stop with a savepoint, and show the CPI² job on the local Flink session
# cluster through its REST API (no Flink distribution needed, only curl and jq).
#   flink-rest.sh submit JAR SAVEPOINT_OR_EMPTY [job options...]
#   flink-rest.sh stop        stop the running job with a savepoint into $STACK_DIR/savepoints
#   flink-rest.sh status
# Environment (from mk/common.mk): STACK_DIR, STACK_HOST, FLINK_REST_PORT, KAFKA_PORT, CLICKHOUSE_HTTP_PORT.
set -euo pipefail

FLINK_URL="http://${STACK_HOST:-127.0.0.1}:${FLINK_REST_PORT:-8081}"
CLICKHOUSE_URL="http://${STACK_HOST:-127.0.0.1}:${CLICKHOUSE_HTTP_PORT:-8123}"
JOB_NAME=${JOB_NAME:-cpi2-flink-jobs}
STATE="${STACK_DIR:?}/flink-jobs"
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

running_job() {
  curl -sf "$FLINK_URL/jobs/overview" |
    jq -r --arg n "$JOB_NAME" '.jobs[] | select(.name == $n and (.state == "RUNNING" or .state == "CREATED" or .state == "INITIALIZING")) | .jid' | head -1
}

submit() {
  local jar=$1 savepoint=$2
  shift 2
  require_flink
  [[ -f $jar ]] || die "no job jar at $jar (make build)"
  local jid
  jid=$(running_job)
  [[ -z $jid ]] || die "job $jid is already running; make stop first"
  local args=(--kafka.bootstrap "${STACK_HOST:-127.0.0.1}:${KAFKA_PORT:-9092}")
  # as principal detector: only the client file's path goes into the job, not its password
  local client="$STACK_DIR/secrets/kafka-detector.properties"
  [[ -f $client ]] && args+=(--kafka.client-file "$client")
  if [[ $(curl -s "$CLICKHOUSE_URL/?query=EXISTS%20TABLE%20cpi2.incidents" 2>/dev/null) == 1 ]]; then
    args+=(--clickhouse.url "$CLICKHOUSE_URL")
    log "ClickHouse tables found: writing to $CLICKHOUSE_URL"
  else
    log "no cpi2.incidents table in ClickHouse at $CLICKHOUSE_URL: ClickHouse sinks off"
  fi
  args+=("$@")
  local up id
  up=$(curl -s -X POST -F "jarfile=@$jar" "$FLINK_URL/jars/upload") || die "upload of $jar failed"
  id=$(jq -r '.filename // empty' <<<"$up")
  [[ -n $id ]] || die "upload of $jar refused: $up"
  id=${id##*/}
  local body argv
  argv=$(printf '%s\n' "${args[@]}" | jq -R . | jq -sc .) # jq 1.6 reads --x after --args as options
  body=$(jq -n --arg cls org.cpi2.flink.Cpi2Job --arg sp "$savepoint" --argjson argv "$argv" '{
      entryClass: $cls,
      programArgsList: $argv,
      allowNonRestoredState: false
    } + (if $sp == "" then {} else {savepointPath: $sp} end)')
  log "running $id ${savepoint:+from savepoint $savepoint }with: ${args[*]}"
  jid=$(post_json "$FLINK_URL/jars/$id/run" "$body" | jq -r '.jobid')
  mkdir -p "$STATE"
  echo "$jid" >"$STATE/job-id"
  for _ in $(seq 1 60); do
    local st
    st=$(curl -sf "$FLINK_URL/jobs/$jid" | jq -r '.state')
    case $st in
      RUNNING) log "job $jid is RUNNING"; echo "$jid"; return 0 ;;
      FAILED | CANCELED | FINISHED) die "job $jid is $st: $(curl -sf "$FLINK_URL/jobs/$jid/exceptions" | jq -r '.["root-exception"] // empty' | head -5)" ;;
    esac
    sleep 1
  done
  die "job $jid did not reach RUNNING within 60 s"
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
  curl -sf "$FLINK_URL/jobs/overview" | jq -r --arg n "$JOB_NAME" '.jobs[] | select(.name == $n) | "\(.jid) \(.state) started \(.["start-time"] / 1000 | todate)"'
  [[ -f $STATE/last-savepoint ]] && echo "last savepoint: $(cat "$STATE/last-savepoint")"
  return 0
}

cmd=${1:-}
shift || true
case $cmd in
  submit) [[ $# -ge 2 ]] || die "usage: flink-rest.sh submit JAR SAVEPOINT_OR_EMPTY [job options...]"; submit "$@" ;;
  stop) stop ;;
  status) status ;;
  *) die "usage: flink-rest.sh submit|stop|status (see the first lines of $0)" ;;
esac
