-- Placement advice from the interference history (issue 22; the paper's section 9): job pairs
-- that should not share a machine or a NUMA node, ranked by evidence. Per (victim job,
-- antagonist job): throttling incidents, hosts, the caps judged true or false positive and those
-- not judged, the victim's CPI over its spec mean at detection, its CPI while the antagonist was
-- capped relative to before (outcomes' relative_cpi: below 1, the cap helped), and the victim
-- job's mean NUMA score over the window (NULL where no sample has one).
-- score = (true positives + 0.5 x incidents not judged) x (mean relative CPI - 1), at least 0:
-- false positives add nothing. scope = 'numa_node' when the victim's memory is local (mean NUMA
-- score >= 0.9: keeping the pair on different nodes separates their caches and memory
-- controllers), else 'machine'.
-- param from_us Int64: window start, microseconds since the epoch (inclusive)
-- param to_us Int64: window end, microseconds since the epoch (exclusive)
-- param signal String = '': the signal incidents were detected on (cpi, cpu_pressure, memory_pressure, llc_mpki); '' = every signal
-- param limit UInt32 = 20: rows returned
SELECT
    victim_job,
    antagonist_job,
    incidents,
    hosts,
    true_positives,
    false_positives,
    incidents - judged AS not_judged,
    mean_correlation,
    mean_relative_cpi,
    capped_relative_cpi,
    if(numa_samples > 0, toNullable(round(numa_sum / numa_samples, 4)), NULL) AS victim_numa_score,
    if(numa_samples > 0 AND numa_sum / numa_samples >= 0.9, 'numa_node', 'machine') AS scope,
    round(greatest(0, (true_positives + 0.5 * (incidents - judged)) * (mean_relative_cpi - 1)), 4) AS score
FROM
(
    SELECT
        victim_job,
        antagonist_job,
        count() AS incidents,
        uniqExact(host) AS hosts,
        sum(verdict = 'TRUE_POSITIVE') AS true_positives,
        sum(verdict = 'FALSE_POSITIVE') AS false_positives,
        sum(verdict != '') AS judged,
        round(avg(correlation), 4) AS mean_correlation,
        round(avg(victim_cpi / spec_mean), 4) AS mean_relative_cpi,
        if(sum(verdict != '') > 0, toNullable(round(sumIf(relative_cpi, verdict != '') / sum(verdict != ''), 4)), NULL)
            AS capped_relative_cpi
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
        SELECT assumeNotNull(incident_id) AS incident_id, verdict, relative_cpi
        FROM {{DB}}.outcomes FINAL
        WHERE incident_id IS NOT NULL AND judged_at_us >= {from_us:Int64}
    ) AS o
    USING incident_id
    GROUP BY victim_job, antagonist_job
) AS p
ANY LEFT JOIN
(
    SELECT job AS victim_job, sum(assumeNotNull(numa_score)) AS numa_sum, count() AS numa_samples
    FROM {{DB}}.samples
    WHERE window_start_us >= {from_us:Int64} AND window_start_us < {to_us:Int64} AND numa_score IS NOT NULL
    GROUP BY job
) AS n
USING victim_job
ORDER BY score DESC, incidents DESC, victim_job, antagonist_job
LIMIT {limit:UInt32}
