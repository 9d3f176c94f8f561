#!/bin/bash
# Creates the CPI2 topics listed in schemas/topics.conf (the local stack's list) on a broker;
# topics that exist are left alone. With --secrets, as admin (--command-config), it first sets
# the SCRAM-SHA-512 password of every SCRAM client file there, and afterwards adds the ACLs of
# stack/kafka/acls.conf (--acls): what stack/kafka/CreateTopics.java does for the local stack.
# docker-compose.yml runs it once in the apache/kafka image.
#   kafka-topics.sh [--bootstrap-server HOST:PORT] [--command-config FILE] [--secrets DIR]
#                   [--acls ACLS_CONF] [--print] TOPICS_CONF
# --print: only print the Kafka tools' commands (the tests use it); no password is printed.
set -euo pipefail

bootstrap=kafka:19092
print=0
client=() secrets="" acls=""
while [[ $# -gt 1 ]]; do
  case $1 in
    --bootstrap-server) bootstrap=$2; shift 2 ;;
    --command-config) client=(--command-config "$2"); shift 2 ;;
    --secrets) secrets=$2; shift 2 ;;
    --acls) acls=$2; shift 2 ;;
    --print) print=1; shift ;;
    *) echo "kafka-topics: unknown option $1" >&2; exit 2 ;;
  esac
done
conf=${1:?usage: kafka-topics.sh [--bootstrap-server HOST:PORT] [--command-config FILE] [--secrets DIR] [--acls ACLS_CONF] [--print] TOPICS_CONF}
tool=/opt/kafka/bin/kafka-topics.sh
run() { if [[ $print == 1 ]]; then echo "$*"; else "$@"; fi; }

if [[ -n $secrets ]]; then
  # the password goes through a 0600 file (--add-config-file), not the command line
  scram=$(mktemp)
  trap 'rm -f "$scram"' EXIT
  for f in "$secrets"/kafka-*.properties; do
    [[ $(sed -n 's/^sasl.mechanisms=//p' "$f") == SCRAM-SHA-512 ]] || continue
    user=$(sed -n 's/^sasl.username=//p' "$f")
    echo "SCRAM-SHA-512=[iterations=4096,password=$(sed -n 's/^sasl.password=//p' "$f")]" >"$scram"
    run /opt/kafka/bin/kafka-configs.sh --bootstrap-server "$bootstrap" "${client[@]}" --alter --entity-type users \
      --entity-name "$user" --add-config-file "$scram"
  done
fi

n=0
while read -r topic partitions retention bytes policy segment _; do
  [[ -z $topic || $topic == \#* ]] && continue
  [[ $partitions =~ ^[0-9]+$ && $retention =~ ^-?[0-9]+$ && $bytes =~ ^-?[0-9]+$ && $policy =~ ^(delete|compact)$ && $segment =~ ^[0-9]+$ ]] ||
    { echo "kafka-topics: bad line for $topic in $conf" >&2; exit 1; }
  cmd=("$tool" --bootstrap-server "$bootstrap" "${client[@]}" --create --if-not-exists --topic "$topic"
       --partitions "$partitions" --replication-factor 1
       --config "retention.ms=$retention" --config "retention.bytes=$bytes" --config "cleanup.policy=$policy" --config "segment.ms=$segment")
  run "${cmd[@]}"
  n=$((n + 1))
done <"$conf"
[[ $n -gt 0 ]] || { echo "kafka-topics: no topics in $conf" >&2; exit 1; }
echo "kafka-topics: $n topics on $bootstrap" >&2

[[ -n $acls ]] || exit 0
a=0
while read -r principal resource pattern name operation _; do
  [[ -z $principal || $principal == \#* ]] && continue
  [[ $resource =~ ^(topic|group|transactionalId)$ && $pattern =~ ^(literal|prefixed)$ && $operation =~ ^[A-Z_]+$ ]] ||
    { echo "kafka-topics: bad line for $principal in $acls" >&2; exit 1; }
  [[ $resource == transactionalId ]] && resource=transactional-id
  run /opt/kafka/bin/kafka-acls.sh --bootstrap-server "$bootstrap" "${client[@]}" --add \
    --allow-principal "User:$principal" --operation "$operation" "--$resource" "$name" --resource-pattern-type "$pattern"
  a=$((a + 1))
done <"$acls"
echo "kafka-topics: $a ACLs from $acls" >&2
