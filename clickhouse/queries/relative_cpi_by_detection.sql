-- Each judged cap of a CPI incident (paper figures 15b and 16c): the victim's relative CPI while
-- its antagonist was capped (cpi_during / cpi_before) beside what was known at detection: the
-- antagonist's correlation (15b plots it for the true positives) and the victim's CPI
-- degradation, cpi_before / its job's spec mean (16c). Correlation: the outcome's own, else its
-- incident's (the capped antagonist's; the Flink judge leaves the outcome's null). Band: victim
-- class LATENCY_SENSITIVE = production, any other class = non-production. Caps without an
-- incident (an operator's) are in operator_caps_judged.
-- param from_us Int64: judged from, microseconds since the epoch (inclusive)
-- param to_us Int64: judged until, microseconds since the epoch (exclusive)
-- param min_correlation Float64 = 0: only caps at or above this correlation (the paper's 16c: 0.35)
SELECT
    band,
    action_id,
    verdict,
    round(judged_correlation, 4) AS correlation,
    round(cpi_before / spec_mean, 4) AS cpi_degradation,
    round(relative_cpi, 4) AS relative_cpi
FROM
(
    SELECT
        if(victim_class = 'LATENCY_SENSITIVE', 'production', 'non-production') AS band,
        action_id,
        verdict,
        if(isNotNull(own_correlation), assumeNotNull(own_correlation), ifNull(incident_correlation, 0.)) AS judged_correlation,
        cpi_before,
        spec_mean,
        relative_cpi
    FROM
    (
        SELECT action_id, victim_class, verdict, correlation AS own_correlation, cpi_before, relative_cpi,
               ifNull(incident_id, '') AS join_incident
        FROM {{DB}}.outcomes FINAL
        WHERE judged_at_us >= {from_us:Int64} AND judged_at_us < {to_us:Int64} AND isNotNull(incident_id)
    ) AS judged
    ANY INNER JOIN
    (
        SELECT incident_id AS join_incident, correlation AS incident_correlation, spec_mean
        FROM {{DB}}.incidents FINAL
        WHERE signal = 'cpi' AND spec_mean > 0 AND incident_id IN
        (
            SELECT ifNull(incident_id, '') FROM {{DB}}.outcomes
            WHERE judged_at_us >= {from_us:Int64} AND judged_at_us < {to_us:Int64}
        )
    ) AS detected USING (join_incident)
)
WHERE judged_correlation >= {min_correlation:Float64} AND cpi_before > 0
ORDER BY band DESC, correlation, action_id
