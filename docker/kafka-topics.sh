#!/bin/bash
# Creates the CPI2 topics listed in stack/kafka/topics.conf (the local stack's list) on a broker;
# topics that exist are left alone. docker-compose.yml runs it once in the apache/kafka image.
#   kafka-topics.sh [--bootstrap-server HOST:PORT] [--print] TOPICS_CONF
# --print: only print the kafka-topics.sh commands (the tests use it).
set -euo pipefail

bootstrap=kafka:19092
print=0
while [[ $# -gt 1 ]]; do
  case $1 in
    --bootstrap-server) bootstrap=$2; shift 2 ;;
    --print) print=1; shift ;;
    *) echo "kafka-topics: unknown option $1" >&2; exit 2 ;;
  esac
done
conf=${1:?usage: kafka-topics.sh [--bootstrap-server HOST:PORT] [--print] TOPICS_CONF}
tool=/opt/kafka/bin/kafka-topics.sh

n=0
while read -r topic partitions retention bytes policy segment _; do
  [[ -z $topic || $topic == \#* ]] && continue
  [[ $partitions =~ ^[0-9]+$ && $retention =~ ^-?[0-9]+$ && $bytes =~ ^-?[0-9]+$ && $policy =~ ^(delete|compact)$ && $segment =~ ^[0-9]+$ ]] ||
    { echo "kafka-topics: bad line for $topic in $conf" >&2; exit 1; }
  cmd=("$tool" --bootstrap-server "$bootstrap" --create --if-not-exists --topic "$topic"
       --partitions "$partitions" --replication-factor 1
       --config "retention.ms=$retention" --config "retention.bytes=$bytes" --config "cleanup.policy=$policy" --config "segment.ms=$segment")
  if [[ $print == 1 ]]; then
    echo "${cmd[*]}"
  else
    "${cmd[@]}"
  fi
  n=$((n + 1))
done <"$conf"
[[ $n -gt 0 ]] || { echo "kafka-topics: no topics in $conf" >&2; exit 1; }
echo "kafka-topics: $n topics on $bootstrap" >&2
