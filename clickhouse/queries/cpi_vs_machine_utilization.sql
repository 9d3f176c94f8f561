-- Victim CPI against the machine's CPU utilisation at detection (paper figure 14 a-c): incidents in
-- 10 % buckets of the host's utilisation, a fraction of its CPUs: the host's task CPU usage at
-- detection (incidents.machine_cpu_utilization, CPU-sec/sec summed over its tasks) divided by its
-- CPUs: the most its samples reported that day (samples_host_days, from samples' host_cpus), else
-- Telegraf's latest n_cpus of the host in [from_us - 1 h, to_us). Incidents of a host with
-- neither, or without a measured victim CPI (victim_cpi 0, e.g. VICTIM_CPU_TOO_LOW), are left
-- out; a usage above the CPU count lands in 0.9.
-- Per bucket: incidents and the share of incidents up to this bucket (14b, a CDF), the victim CPI
-- relative to its job's spec mean (14c), the mean correlation of the named antagonists (14a; NULL
-- when none was named), and Telegraf's utilisation of the host (1 - cpu-total usage_idle / 100)
-- in the minute of detection, where Telegraf reported one (NULL otherwise).
-- param job String = '': victim job ('' = every job)
-- param signal String = 'cpi': the signal incidents were detected on (victim_cpi is that signal's); '' = every signal
-- param from_us Int64: window start, microseconds since the epoch (inclusive)
-- param to_us Int64: window end, microseconds since the epoch (exclusive)
SELECT
    level / 10 AS utilization_bucket,
    countIf(bucket = level) AS incidents,
    round(countIf(bucket <= level) / count(), 4) AS cumulative_share,
    round(avgIf(victim_cpi, bucket = level), 4) AS mean_victim_cpi,
    round(avgIf(relative_cpi, bucket = level), 4) AS mean_relative_cpi,
    round(maxIf(relative_cpi, bucket = level), 4) AS max_relative_cpi,
    if(countIf(bucket = level AND isNotNull(correlation)) = 0, NULL,
       round(avgIf(assumeNotNull(correlation), bucket = level AND isNotNull(correlation)), 4)) AS mean_correlation,
    if(countIf(bucket = level AND telegraf_found = 1) = 0, NULL,
       round(avgIf(telegraf_utilization, bucket = level AND telegraf_found = 1), 4)) AS mean_telegraf_utilization
FROM
(
    SELECT
        toUInt8(least(floor(usage / cpus * 10), 9)) AS bucket,
        victim_cpi,
        relative_cpi,
        correlation,
        telegraf_utilization,
        telegraf_found
    FROM
    (
        SELECT host, minute, usage, victim_cpi, relative_cpi, correlation, if(sampled_cpus > 0, sampled_cpus, telegraf_cpus) AS cpus
        FROM
        (
            SELECT host, minute, usage, victim_cpi, relative_cpi, correlation, sampled_cpus
            FROM
            (
                SELECT
                    host,
                    event_date AS day,
                    intDiv(detected_at_us, 60000000) AS minute,
                    assumeNotNull(machine_cpu_utilization) AS usage,
                    victim_cpi,
                    victim_cpi / spec_mean AS relative_cpi,
                    correlation
                FROM {{DB}}.incidents FINAL
                WHERE detected_at_us >= {from_us:Int64} AND detected_at_us < {to_us:Int64}
                  AND machine_cpu_utilization IS NOT NULL AND spec_mean > 0 AND victim_cpi > 0
                  AND ({job:String} = '' OR victim_job = {job:String})
                  AND ({signal:String} = '' OR signal = {signal:String})
            ) AS detected
            ANY LEFT JOIN
            (
                SELECT day, host, toInt32(maxMerge(host_cpus)) AS sampled_cpus
                FROM {{DB}}.samples_host_days
                WHERE day >= toDate(toDateTime(intDiv({from_us:Int64}, 1000000)))
                  AND day <= toDate(toDateTime(intDiv({to_us:Int64} - 1, 1000000)))
                GROUP BY day, host
            ) AS sampled USING (day, host)
        ) AS counted
        ANY LEFT JOIN
        (
            SELECT host, argMax(assumeNotNull(n_cpus), timestamp_ms) AS telegraf_cpus
            FROM {{DB}}.host_metrics
            WHERE name = 'system' AND n_cpus IS NOT NULL
              AND timestamp_ms >= intDiv({from_us:Int64}, 1000) - 3600000 AND timestamp_ms < intDiv({to_us:Int64}, 1000)
            GROUP BY host
        ) AS reported USING (host)
        WHERE if(sampled_cpus > 0, sampled_cpus, telegraf_cpus) > 0
    ) AS placed
    ANY LEFT JOIN
    (
        SELECT
            host,
            intDiv(timestamp_ms, 60000) AS minute,
            avg(1 - assumeNotNull(usage_idle) / 100) AS telegraf_utilization,
            toUInt8(1) AS telegraf_found
        FROM {{DB}}.host_metrics FINAL
        WHERE name = 'cpu' AND cpu = 'cpu-total' AND usage_idle IS NOT NULL
          AND timestamp_ms >= intDiv({from_us:Int64}, 1000) AND timestamp_ms < intDiv({to_us:Int64}, 1000)
        GROUP BY host, minute
    ) AS telegraf USING (host, minute)
)
ARRAY JOIN [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] AS level
GROUP BY level
HAVING incidents > 0
ORDER BY level
