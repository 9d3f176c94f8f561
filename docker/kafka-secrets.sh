#!/bin/bash
# docker-compose's kafka-secrets one-shot: the CA, Kafka's certificate (SAN DNS:kafka, the
# service name, and the host's loopback for the published port) and every principal's client
# file (stack/kafka/make-secrets.sh, the local stack's script) into the kafka-secrets volume,
# once; then admin's settings for the Kafka image's Java tools, and who may read what: each
# secret is 0600 and belongs to the user of the one container that reads it.
#   kafka-secrets.sh DIR
set -euo pipefail
dir=${1:?usage: kafka-secrets.sh DIR}
KAFKA_SASL_LISTENERS="internal external" /opt/cpi2/kafka/make-secrets.sh "$dir" "$dir/ca.pem" \
  DNS:kafka DNS:localhost IP:127.0.0.1
pw=$(sed -n 's/^sasl.password=//p' "$dir/kafka-admin.properties")
umask 077
cat > "$dir/kafka-admin-java.properties" <<PROPS
# admin for kafka-topics.sh, kafka-acls.sh, kafka-configs.sh and the healthcheck (made by docker/kafka-secrets.sh)
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="$pw";
ssl.truststore.type=PEM
ssl.truststore.location=$dir/ca.pem
PROPS
# ClickHouse's user cpi2 (the chart's clickhouse.user) signs in with this password: one copy for
# each container that reads it (ClickHouse, which makes the user; the schema one-shot; the
# TaskManager that runs the loader; Grafana), made once.
if [ ! -s "$dir/clickhouse-password-clickhouse" ]; then
  chpw=$(openssl rand -hex 16)
  for reader in clickhouse tools flink grafana; do printf '%s\n' "$chpw" > "$dir/clickhouse-password-$reader"; done
fi
# apache/kafka runs as uid 1000 (the broker and the kafka-topics one-shot), flink as 9999,
# clickhouse as 101, the tools image as 65532, grafana as 472; the agents and Telegraf as root.
chown 1000 "$dir/kafka-server.pem" "$dir/server-sasl.properties" "$dir/kafka-admin-java.properties"
chown 9999 "$dir/kafka-detector.properties" "$dir/kafka-loader.properties"
chown 101 "$dir/kafka-clickhouse.properties" "$dir/clickhouse-password-clickhouse"
chown 65532 "$dir/clickhouse-password-tools"
chown 9999 "$dir/clickhouse-password-flink"
chown 472 "$dir/clickhouse-password-grafana"
chmod 0711 "$dir"
echo "kafka-secrets: $(ls "$dir" | wc -l) files in $dir" >&2
