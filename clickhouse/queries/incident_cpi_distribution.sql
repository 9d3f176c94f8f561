-- Victim CPI relative to its job's spec mean at detection (victim_cpi / spec_mean), for incidents
-- that named an antagonist and for those that could not (paper figure 14d): exact quantiles at
-- 10 % steps per group (quantileExact: the value at position floor(level * n) of the sorted
-- values). CPI incidents only (victim_cpi of another signal is not a CPI); incidents without a
-- measured victim CPI (victim_cpi 0) are left out.
-- param from_us Int64: window start, microseconds since the epoch (inclusive)
-- param to_us Int64: window end, microseconds since the epoch (exclusive)
SELECT antagonist, quantile, round(value, 4) AS relative_cpi, incidents
FROM
(
    SELECT
        if(isNotNull(antagonist_task), 'identified', 'not identified') AS antagonist,
        [0., 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.] AS levels,
        quantilesExact(0., 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.)(victim_cpi / spec_mean) AS values,
        count() AS incidents
    FROM {{DB}}.incidents FINAL
    WHERE detected_at_us >= {from_us:Int64} AND detected_at_us < {to_us:Int64}
      AND signal = 'cpi' AND spec_mean > 0 AND victim_cpi > 0
    GROUP BY antagonist
)
ARRAY JOIN levels AS quantile, values AS value
ORDER BY antagonist, quantile
