-- True- and false-positive rates of capping by how far the victim's CPI stood above its job's
-- spec mean at detection, in the spec's standard deviations (paper figure 16b): for each k, the
-- judged caps of CPI incidents whose victim CPI was at least k sigmas above the mean
-- ((victim_cpi - spec_mean) / spec_stddev >= k). Only caps at or above min_correlation (the
-- outcome's correlation, else its incident's). Band: victim class LATENCY_SENSITIVE = production,
-- any other class = non-production. Rates are over TRUE_POSITIVE + FALSE_POSITIVE verdicts.
-- param from_us Int64: judged from, microseconds since the epoch (inclusive)
-- param to_us Int64: judged until, microseconds since the epoch (exclusive)
-- param min_correlation Float64 = 0.35: only caps at or above this correlation (the paper's)
SELECT
    band,
    sigmas,
    countIf(increase >= sigmas) AS outcomes,
    countIf(increase >= sigmas AND verdict = 'TRUE_POSITIVE') AS true_positives,
    countIf(increase >= sigmas AND verdict = 'FALSE_POSITIVE') AS false_positives,
    countIf(increase >= sigmas AND verdict NOT IN ('TRUE_POSITIVE', 'FALSE_POSITIVE')) AS other,
    round(if(true_positives + false_positives = 0, 0., true_positives / (true_positives + false_positives)), 4) AS tp_rate,
    round(if(true_positives + false_positives = 0, 0., false_positives / (true_positives + false_positives)), 4) AS fp_rate
FROM
(
    SELECT
        if(victim_class = 'LATENCY_SENSITIVE', 'production', 'non-production') AS band,
        verdict,
        (victim_cpi - spec_mean) / spec_stddev AS increase
    FROM
    (
        SELECT victim_class, verdict, correlation AS own_correlation, ifNull(incident_id, '') AS join_incident
        FROM {{DB}}.outcomes FINAL
        WHERE judged_at_us >= {from_us:Int64} AND judged_at_us < {to_us:Int64} AND isNotNull(incident_id)
    ) AS judged
    ANY INNER JOIN
    (
        SELECT incident_id AS join_incident, correlation AS incident_correlation, victim_cpi, spec_mean, spec_stddev
        FROM {{DB}}.incidents FINAL
        WHERE signal = 'cpi' AND spec_stddev > 0 AND victim_cpi > 0 AND incident_id IN
        (
            SELECT ifNull(incident_id, '') FROM {{DB}}.outcomes
            WHERE judged_at_us >= {from_us:Int64} AND judged_at_us < {to_us:Int64}
        )
    ) AS detected USING (join_incident)
    WHERE if(isNotNull(own_correlation), assumeNotNull(own_correlation), ifNull(incident_correlation, 0.)) >= {min_correlation:Float64}
)
ARRAY JOIN [0, 1, 2, 3, 4, 5, 6] AS sigmas
GROUP BY band, sigmas
ORDER BY band DESC, sigmas
