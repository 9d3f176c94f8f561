-- The victim's relative LLC misses per thousand instructions against its relative CPI for the
-- true positives (paper figure 15c): for each TRUE_POSITIVE outcome, the victim's mean llc_mpki
-- over its samples in [applied - before_s, applied) and in [applied, expiry) of the cap, as the
-- Flink judge takes its CPI, and their ratio beside the outcome's relative CPI. Outcomes whose
-- victim has no llc_mpki on either side (no PMU counting LLC misses) are left out. Caps of up to
-- an hour: the samples are read from from_us - 2 h. Band: victim class LATENCY_SENSITIVE =
-- production, any other class = non-production.
-- param from_us Int64: judged from, microseconds since the epoch (inclusive)
-- param to_us Int64: judged until, microseconds since the epoch (exclusive)
-- param before_s UInt32 = 600: the span before the cap (the Flink job's judge.before-s)
SELECT
    band,
    action_id,
    round(relative_cpi, 4) AS relative_cpi,
    round(mpki_before, 4) AS llc_mpki_before,
    round(mpki_during, 4) AS llc_mpki_during,
    round(mpki_during / mpki_before, 4) AS relative_llc_mpki
FROM
(
    SELECT
        band,
        action_id,
        relative_cpi,
        avgIf(mpki, window_start_us >= applied_us - {before_s:UInt32} * 1000000 AND window_start_us < applied_us) AS mpki_before,
        avgIf(mpki, window_start_us >= applied_us AND window_start_us < expires_us) AS mpki_during,
        countIf(window_start_us >= applied_us - {before_s:UInt32} * 1000000 AND window_start_us < applied_us) AS n_before,
        countIf(window_start_us >= applied_us AND window_start_us < expires_us) AS n_during
    FROM
    (
        SELECT band, action_id, relative_cpi, host, task, applied_us, expires_us
        FROM
        (
            SELECT
                if(victim_class = 'LATENCY_SENSITIVE', 'production', 'non-production') AS band,
                action_id,
                relative_cpi,
                host,
                victim_task AS task
            FROM {{DB}}.outcomes FINAL
            WHERE judged_at_us >= {from_us:Int64} AND judged_at_us < {to_us:Int64} AND verdict = 'TRUE_POSITIVE'
        ) AS judged
        ANY INNER JOIN
        (
            SELECT action_id, at_us AS applied_us, ifNull(expires_at_us, at_us) AS expires_us
            FROM {{DB}}.actions FINAL
            WHERE kind = 'APPLIED' AND at_us >= {from_us:Int64} - 7200000000 AND at_us < {to_us:Int64}
        ) AS capped USING (action_id)
    ) AS caps
    ALL INNER JOIN
    (
        -- no FINAL (on 18.16 it reads every part of the window, not only the victims' ranges): a
        -- replayed sample, which repeats its values, weighs twice in the means
        SELECT host, task, window_start_us, assumeNotNull(llc_mpki) AS mpki
        FROM {{DB}}.samples
        WHERE llc_mpki IS NOT NULL
          AND window_start_us >= {from_us:Int64} - 7200000000 AND window_start_us < {to_us:Int64}
          AND (host, task) IN
          (
              SELECT host, victim_task FROM {{DB}}.outcomes
              WHERE judged_at_us >= {from_us:Int64} AND judged_at_us < {to_us:Int64} AND verdict = 'TRUE_POSITIVE'
          )
    ) AS measured USING (host, task)
    GROUP BY band, action_id, relative_cpi
)
WHERE n_before > 0 AND n_during > 0 AND mpki_before > 0
ORDER BY band DESC, relative_cpi, action_id
