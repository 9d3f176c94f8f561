-- Operators' caps (actions APPLIED with cause OPERATOR, e.g. cpi2ctl cap) judged by the rule the
-- Flink judge applies to the enforcer's (paper section 7 judged caps set by hand on reported
-- antagonists). The victim is that of the latest incident on the host in the lookback before the
-- cap that named the capped task among its suspects; its mean CPI over its samples at or above
-- min_cpu_usage in [applied - before_s, applied) and in [applied, expiry): TRUE_POSITIVE when
-- the mean during the cap is below the mean before by more than that incident's spec stddev,
-- FALSE_POSITIVE when above by more, NOISE in between, INCONCLUSIVE without samples on either side
-- (or without such an incident: victim_task '').
-- param from_us Int64: caps applied from, microseconds since the epoch (inclusive)
-- param to_us Int64: caps applied until, microseconds since the epoch (exclusive)
-- param before_s UInt32 = 600: the span before the cap (the Flink job's judge.before-s)
-- param min_cpu_usage Float64 = 0.25: victim samples below this CPU usage are left out (sample.min-cpu-usage)
-- param lookback_s UInt32 = 3600: how long before the cap an incident may have named the task
SELECT
    action_id,
    host,
    task,
    victim_task,
    incident_id,
    applied_at_us,
    expires_at_us,
    samples_before,
    samples_during,
    round(if(samples_before = 0, 0., cpi_before), 4) AS cpi_before,
    round(if(samples_during = 0, 0., cpi_during), 4) AS cpi_during,
    round(if(samples_before = 0 OR samples_during = 0, 0., cpi_during / cpi_before), 4) AS relative_cpi,
    spec_stddev,
    multiIf(samples_before = 0 OR samples_during = 0 OR cpi_before <= 0, 'INCONCLUSIVE',
            cpi_during < cpi_before - spec_stddev, 'TRUE_POSITIVE',
            cpi_during > cpi_before + spec_stddev, 'FALSE_POSITIVE', 'NOISE') AS verdict
FROM
(
    SELECT
        action_id, host, task, victim_task, incident_id, applied_at_us, expires_at_us, spec_stddev,
        countIf(in_before) AS samples_before,
        countIf(in_during) AS samples_during,
        avgIf(sample_cpi, in_before) AS cpi_before,
        avgIf(sample_cpi, in_during) AS cpi_during
    FROM
    (
        SELECT
            action_id, host, task, victim_task, incident_id, applied_at_us, expires_at_us, spec_stddev, sample_cpi,
            found = 1 AND window_start_us >= applied_at_us - {before_s:UInt32} * 1000000 AND window_start_us < applied_at_us AS in_before,
            found = 1 AND window_start_us >= applied_at_us AND window_start_us < expires_at_us AS in_during
        FROM
        (
            SELECT action_id, host, task, incident_id, applied_at_us, expires_at_us, victim_task, spec_stddev
            FROM
            (
                SELECT
                    action_id, host, task, applied_at_us, expires_at_us,
                    argMaxIf(incident_id, detected_at_us, named) AS incident_id
                FROM
                (
                    SELECT
                        action_id, host, task, applied_at_us, expires_at_us, incident_id, detected_at_us,
                        detected_at_us <= applied_at_us AND detected_at_us >= applied_at_us - {lookback_s:UInt32} * 1000000 AS named
                    FROM
                    (
                        SELECT action_id, host, task, at_us AS applied_at_us, ifNull(expires_at_us, at_us) AS expires_at_us
                        FROM {{DB}}.actions FINAL
                        WHERE kind = 'APPLIED' AND cause = 'OPERATOR' AND at_us >= {from_us:Int64} AND at_us < {to_us:Int64}
                    ) AS caps
                    ALL LEFT JOIN
                    (
                        SELECT host, task, incident_id, detected_at_us
                        FROM {{DB}}.incident_suspects FINAL
                        WHERE detected_at_us >= {from_us:Int64} - {lookback_s:UInt32} * 1000000 AND detected_at_us < {to_us:Int64}
                    ) AS suspected USING (host, task)
                )
                GROUP BY action_id, host, task, applied_at_us, expires_at_us
            ) AS named_by
            ANY LEFT JOIN
            (
                SELECT incident_id, victim_task, spec_stddev
                FROM {{DB}}.incidents FINAL
                WHERE detected_at_us >= {from_us:Int64} - {lookback_s:UInt32} * 1000000 AND detected_at_us < {to_us:Int64}
            ) AS detected USING (incident_id)
        ) AS victims
        ALL LEFT JOIN
        (
            -- one row per sample window (a replay inserts a sample again): what FINAL gives, without
            -- FINAL, which on 18.16 reads every part of the window and not only the victims' ranges
            SELECT host, task AS victim_task, window_start_us, any(assumeNotNull(cpi)) AS sample_cpi, toUInt8(1) AS found
            FROM {{DB}}.samples
            WHERE cpi IS NOT NULL AND cpu_usage >= {min_cpu_usage:Float64}
              AND window_start_us >= {from_us:Int64} - {before_s:UInt32} * 1000000 AND window_start_us < {to_us:Int64} + 7200000000
              AND (host, task) IN
              (
                  SELECT host, victim_task FROM {{DB}}.incidents
                  WHERE detected_at_us >= {from_us:Int64} - {lookback_s:UInt32} * 1000000 AND detected_at_us < {to_us:Int64}
                    AND incident_id IN
                    (
                        SELECT incident_id FROM {{DB}}.incident_suspects
                        WHERE detected_at_us >= {from_us:Int64} - {lookback_s:UInt32} * 1000000 AND detected_at_us < {to_us:Int64}
                          AND (host, task) IN
                          (
                              SELECT host, task FROM {{DB}}.actions
                              WHERE kind = 'APPLIED' AND cause = 'OPERATOR' AND at_us >= {from_us:Int64} AND at_us < {to_us:Int64}
                          )
                    )
              )
            GROUP BY host, task, window_start_us
        ) AS measured USING (host, victim_task)
    )
    GROUP BY action_id, host, task, victim_task, incident_id, applied_at_us, expires_at_us, spec_stddev
)
ORDER BY applied_at_us, action_id
