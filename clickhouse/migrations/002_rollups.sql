-- Per job x platform per minute, filled by a materialized view on every insert into samples.
-- Replayed inserts are counted again here (the view sees inserts, not FINAL): sample counts can
-- exceed the truth after a Flink restore; means and quantiles are barely moved. Forensics
-- queries read the base tables; the rollup is for dashboards over long ranges.
CREATE TABLE IF NOT EXISTS {{DB}}.samples_1m (
    job {{LC(String)}},
    platform {{LC(String)}},
    minute DateTime,
    samples AggregateFunction(count),
    tasks AggregateFunction(uniq, String),
    cpi_avg AggregateFunction(avg, Float64),
    cpi_quantiles AggregateFunction(quantiles(0.5, 0.9, 0.99), Float64),
    cpu_usage_avg AggregateFunction(avg, Float64),
    cpu_usage_sum AggregateFunction(sum, Float64)
) ENGINE = AggregatingMergeTree
PARTITION BY toDate(minute)
ORDER BY (job, platform, minute)
{{TTL(toDate(minute) + INTERVAL 400 DAY)}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{DB}}.samples_1m_mv TO {{DB}}.samples_1m AS
SELECT
    job,
    platform,
    toStartOfMinute(toDateTime(intDiv(window_start_us, 1000000))) AS minute,
    countState() AS samples,
    uniqState(task) AS tasks,
    avgState(assumeNotNull(cpi)) AS cpi_avg,
    quantilesState(0.5, 0.9, 0.99)(assumeNotNull(cpi)) AS cpi_quantiles,
    avgState(cpu_usage) AS cpu_usage_avg,
    sumState(cpu_usage) AS cpu_usage_sum
FROM {{DB}}.samples
WHERE cpi IS NOT NULL
GROUP BY job, platform, minute;
