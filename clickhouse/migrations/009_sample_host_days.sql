-- Each host's day of samples (paper section 7's rate of antagonists per machine-day, figure 14's
-- CPU counts): one row per day and host per insert, folded by the merges, filled by a
-- materialized view on every insert into samples, so the day's machines and their CPU counts are
-- read from a thousand rows rather than the day's samples. host_cpus: the most CPUs a sample of
-- the host reported that day (samples' host_cpus, CpiSample v3; 0: none did). The samples already
-- stored are copied in once. A replayed insert adds nothing new (count distinct hosts, max CPUs).
CREATE TABLE IF NOT EXISTS {{DB}}.samples_host_days (
    day Date,
    host {{LC(String)}},
    host_cpus AggregateFunction(max, Int32)
) ENGINE = AggregatingMergeTree
PARTITION BY day
ORDER BY (day, host)
{{TTL(day + INTERVAL 400 DAY)}};

CREATE MATERIALIZED VIEW IF NOT EXISTS {{DB}}.samples_host_days_mv TO {{DB}}.samples_host_days AS
SELECT
    toDate(toDateTime(intDiv(window_start_us, 1000000))) AS day,
    host,
    maxState(toInt32(ifNull(host_cpus, 0))) AS host_cpus
FROM {{DB}}.samples
GROUP BY day, host;

INSERT INTO {{DB}}.samples_host_days
SELECT
    toDate(toDateTime(intDiv(window_start_us, 1000000))) AS day,
    host,
    maxState(toInt32(ifNull(host_cpus, 0))) AS host_cpus
FROM {{DB}}.samples
GROUP BY day, host;
