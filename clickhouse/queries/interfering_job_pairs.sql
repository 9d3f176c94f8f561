-- Job pairs that interfere most (placement advice: keep these apart): throttling incidents per
-- (victim job, antagonist job), the hosts where it happened, and how often capping helped.
-- param from_us Int64: window start, microseconds since the epoch (inclusive)
-- param to_us Int64: window end, microseconds since the epoch (exclusive)
-- param signal String = '': the signal incidents were detected on (cpi, cpu_pressure, memory_pressure, llc_mpki); '' = every signal
-- param limit UInt32 = 20: rows returned
SELECT
    victim_job,
    antagonist_job,
    count() AS incidents,
    uniqExact(host) AS hosts,
    round(avg(correlation), 4) AS mean_correlation,
    round(avg(victim_cpi / spec_mean), 4) AS mean_relative_cpi,
    sum(verdict = 'TRUE_POSITIVE') AS true_positives,
    sum(verdict = 'FALSE_POSITIVE') AS false_positives
FROM
(
    SELECT incident_id, victim_job, assumeNotNull(antagonist_job) AS antagonist_job, host,
           assumeNotNull(correlation) AS correlation, victim_cpi, spec_mean
    FROM {{DB}}.incidents FINAL
    WHERE detected_at_us >= {from_us:Int64} AND detected_at_us < {to_us:Int64}
      AND decision = 'THROTTLE' AND antagonist_job != '' AND spec_mean > 0
      AND ({signal:String} = '' OR signal = {signal:String})
) AS i
ANY LEFT JOIN
(
    SELECT assumeNotNull(incident_id) AS incident_id, verdict
    FROM {{DB}}.outcomes FINAL
    WHERE incident_id IS NOT NULL AND judged_at_us >= {from_us:Int64}
) AS o
USING incident_id
GROUP BY victim_job, antagonist_job
ORDER BY incidents DESC, mean_correlation DESC, victim_job, antagonist_job
LIMIT {limit:UInt32}
