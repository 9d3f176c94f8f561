-- Distribution of the victim's relative CPI while its antagonist was capped (cpi_during /
-- cpi_before, paper figure 16d), per priority band: exact quantiles at 10 % steps
-- (quantileExact: the value at position floor(level * n) of the sorted values).
-- param from_us Int64: judged from, microseconds since the epoch (inclusive)
-- param to_us Int64: judged until, microseconds since the epoch (exclusive)
-- param signal String = '': outcomes of caps for incidents of this signal (cpi, cpu_pressure, ...; an incident id of a signal other than CPI starts with its name and a colon); '' = every cap
SELECT band, quantile, round(value, 4) AS relative_cpi, outcomes
FROM
(
    SELECT
        if(victim_class = 'LATENCY_SENSITIVE', 'production', 'non-production') AS band,
        [0., 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.] AS levels,
        quantilesExact(0., 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.)(relative_cpi) AS values,
        count() AS outcomes
    FROM {{DB}}.outcomes FINAL
    WHERE judged_at_us >= {from_us:Int64} AND judged_at_us < {to_us:Int64}
      AND ({signal:String} = '' OR if(isNull(incident_id), '', if(match(assumeNotNull(incident_id), '^[a-z_]+:'), splitByChar(':', assumeNotNull(incident_id))[1], 'cpi')) = {signal:String})
    GROUP BY band
)
ARRAY JOIN levels AS quantile, values AS value
ORDER BY band DESC, quantile
