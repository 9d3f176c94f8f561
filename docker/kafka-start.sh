#!/bin/bash
# The Kafka service's entrypoint: the broker's SASL settings from the kafka-secrets volume
# (server-sasl.properties, made by stack/kafka/make-secrets.sh) as the apache/kafka image's
# KAFKA_* variables (. as _, - as ___), then the image's own start script. The passwords stay
# out of docker-compose.yml and the container's configuration.
set -euo pipefail
while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  key=${line%%=*}
  var=KAFKA_$(sed -e 's/-/___/g' -e 's/\./_/g' <<<"${key^^}")
  export "$var=${line#*=}"
done </secrets/server-sasl.properties
exec /etc/kafka/docker/run
