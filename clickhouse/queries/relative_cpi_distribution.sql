-- Distribution of the victim's relative CPI while its antagonist was capped (cpi_during /
-- cpi_before, paper figure 16d), per priority band: exact quantiles at 10 % steps
-- (quantileExact: the value at position floor(level * n) of the sorted values).
-- param from_us Int64: judged from, microseconds since the epoch (inclusive)
-- param to_us Int64: judged until, microseconds since the epoch (exclusive)
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
    GROUP BY band
)
ARRAY JOIN levels AS quantile, values AS value
ORDER BY band DESC, quantile
