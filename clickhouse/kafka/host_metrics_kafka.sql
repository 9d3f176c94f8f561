-- Optional, per deployment (not a migration): Telegraf's topic into host_metrics through a Kafka
-- engine table. Applied by `apply.py --kafka-brokers HOST:PORT` after the migrations. Each Kafka
-- message is one JSON line, read as one TabSeparated String column and parsed into host_metrics
-- by the SELECT of migration 003's host_metrics_mv (apply.py copies it in place of the PARSE_FROM marker).
-- Not through host_metrics_raw: 18.16 does not cascade a Kafka table's view into further views.
CREATE TABLE IF NOT EXISTS {{DB}}.host_metrics_kafka (line String)
ENGINE = Kafka
SETTINGS kafka_broker_list = '{{KAFKA_BROKERS}}', kafka_topic_list = '{{KAFKA_TOPIC}}',
         kafka_group_name = '{{KAFKA_GROUP}}', kafka_format = 'TSV';

CREATE MATERIALIZED VIEW IF NOT EXISTS {{DB}}.host_metrics_kafka_mv TO {{DB}}.host_metrics AS
{{PARSE_FROM(host_metrics_kafka)}};
