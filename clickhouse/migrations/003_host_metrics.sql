-- Telegraf's JSON (topic cpi2.host-metrics, json_timestamp_units = "1ms"), one line per metric:
--   {"fields":{"usage_user":1.5,...},"name":"cpu","tags":{"cpu":"cpu-total","host":"h1"},"timestamp":1700000000000}
-- Lines go into host_metrics_raw (one String column, engine Null: nothing is stored there) and the
-- view below parses them into host_metrics. Both 18.16 and current servers parse with
-- visitParamExtract*, which finds a key anywhere in the line (Telegraf's field and tag names are
-- distinct). event_date and ts are DEFAULT, not MATERIALIZED, and the view fills them: 18.16
-- refuses a view pushing into a table with MATERIALIZED columns. Something must feed the lines (see README).
CREATE TABLE IF NOT EXISTS {{DB}}.host_metrics (
    host {{LC(String)}},
    name {{LC(String)}},
    cpu {{LC(String)}},
    timestamp_ms Int64 {{CODEC(Delta, ZSTD)}},
    usage_user Nullable(Float64),
    usage_system Nullable(Float64),
    usage_idle Nullable(Float64),
    usage_iowait Nullable(Float64),
    usage_steal Nullable(Float64),
    used_percent Nullable(Float64),
    load1 Nullable(Float64),
    load5 Nullable(Float64),
    load15 Nullable(Float64),
    n_cpus Nullable(Int32),
    event_date Date DEFAULT toDate(toDateTime(intDiv(timestamp_ms, 1000))),
    ts DateTime DEFAULT toDateTime(intDiv(timestamp_ms, 1000))
) ENGINE = ReplacingMergeTree
PARTITION BY event_date
ORDER BY (host, name, cpu, timestamp_ms)
{{TTL(event_date + INTERVAL 30 DAY)}};

CREATE TABLE IF NOT EXISTS {{DB}}.host_metrics_raw (line String) ENGINE = Null;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{DB}}.host_metrics_mv TO {{DB}}.host_metrics AS
SELECT
    visitParamExtractString(line, 'host') AS host,
    visitParamExtractString(line, 'name') AS name,
    visitParamExtractString(line, 'cpu') AS cpu,
    visitParamExtractInt(line, 'timestamp') AS timestamp_ms,
    if(visitParamHas(line, 'usage_user'), toNullable(visitParamExtractFloat(line, 'usage_user')), NULL) AS usage_user,
    if(visitParamHas(line, 'usage_system'), toNullable(visitParamExtractFloat(line, 'usage_system')), NULL) AS usage_system,
    if(visitParamHas(line, 'usage_idle'), toNullable(visitParamExtractFloat(line, 'usage_idle')), NULL) AS usage_idle,
    if(visitParamHas(line, 'usage_iowait'), toNullable(visitParamExtractFloat(line, 'usage_iowait')), NULL) AS usage_iowait,
    if(visitParamHas(line, 'usage_steal'), toNullable(visitParamExtractFloat(line, 'usage_steal')), NULL) AS usage_steal,
    if(visitParamHas(line, 'used_percent'), toNullable(visitParamExtractFloat(line, 'used_percent')), NULL) AS used_percent,
    if(visitParamHas(line, 'load1'), toNullable(visitParamExtractFloat(line, 'load1')), NULL) AS load1,
    if(visitParamHas(line, 'load5'), toNullable(visitParamExtractFloat(line, 'load5')), NULL) AS load5,
    if(visitParamHas(line, 'load15'), toNullable(visitParamExtractFloat(line, 'load15')), NULL) AS load15,
    if(visitParamHas(line, 'n_cpus'), toNullable(toInt32(visitParamExtractInt(line, 'n_cpus'))), NULL) AS n_cpus,
    toDate(toDateTime(intDiv(timestamp_ms, 1000))) AS event_date,
    toDateTime(intDiv(timestamp_ms, 1000)) AS ts
FROM {{DB}}.host_metrics_raw
WHERE visitParamHas(line, 'timestamp');
