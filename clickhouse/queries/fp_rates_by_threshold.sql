-- True- and false-positive rates of capping by correlation threshold and priority band (paper
-- figure 15): for each threshold, the judged outcomes whose correlation is at least that value.
-- Correlation: the outcome's own, else (the Flink judge leaves it null) that of the capped
-- antagonist among its incident's suspects. Outcomes with neither (manual caps) are left out.
-- Band: victim class LATENCY_SENSITIVE = production, any other class = non-production.
-- Rates are over TRUE_POSITIVE + FALSE_POSITIVE verdicts; NOISE and INCONCLUSIVE are counted apart.
-- param from_us Int64: judged from, microseconds since the epoch (inclusive)
-- param to_us Int64: judged until, microseconds since the epoch (exclusive)
-- param signal String = '': outcomes of caps for incidents of this signal (cpi, cpu_pressure, ...; an incident id of a signal other than CPI starts with its name and a colon); '' = every cap
SELECT
    band,
    threshold,
    countIf(judged_correlation >= threshold) AS outcomes,
    countIf(judged_correlation >= threshold AND verdict = 'TRUE_POSITIVE') AS true_positives,
    countIf(judged_correlation >= threshold AND verdict = 'FALSE_POSITIVE') AS false_positives,
    countIf(judged_correlation >= threshold AND verdict NOT IN ('TRUE_POSITIVE', 'FALSE_POSITIVE')) AS other,
    round(if(true_positives + false_positives = 0, 0., true_positives / (true_positives + false_positives)), 4) AS tp_rate,
    round(if(true_positives + false_positives = 0, 0., false_positives / (true_positives + false_positives)), 4) AS fp_rate
FROM
(
    SELECT
        if(victim_class = 'LATENCY_SENSITIVE', 'production', 'non-production') AS band,
        if(isNotNull(own_correlation), assumeNotNull(own_correlation), suspect_correlation) AS judged_correlation,
        verdict
    FROM
    (
        SELECT
            victim_class,
            correlation AS own_correlation,
            verdict,
            ifNull(incident_id, '') AS join_incident,
            antagonist_task AS join_task
        FROM {{DB}}.outcomes FINAL
        WHERE judged_at_us >= {from_us:Int64} AND judged_at_us < {to_us:Int64}
          AND ({signal:String} = '' OR if(isNull(incident_id), '', if(match(assumeNotNull(incident_id), '^[a-z_]+:'), splitByChar(':', assumeNotNull(incident_id))[1], 'cpi')) = {signal:String})
    ) AS judged
    ANY LEFT JOIN
    (
        SELECT incident_id AS join_incident, task AS join_task, correlation AS suspect_correlation, 1 AS suspect_found
        FROM {{DB}}.incident_suspects FINAL
        WHERE incident_id IN
        (
            SELECT ifNull(incident_id, '') FROM {{DB}}.outcomes
            WHERE judged_at_us >= {from_us:Int64} AND judged_at_us < {to_us:Int64} AND correlation IS NULL
        )
    ) AS suspects USING (join_incident, join_task)
    WHERE isNotNull(own_correlation) OR suspect_found = 1
)
ARRAY JOIN [0., 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9] AS threshold
GROUP BY band, threshold
ORDER BY band DESC, threshold
