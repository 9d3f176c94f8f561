-- How often antagonists are identified, per machine-day (paper section 7: 0.37 per machine-day):
-- per day (UTC) of the window, the incidents in the window that named an antagonist
-- (antagonist_task set, capped or not), the machines that sent samples that day (whole days, from
-- samples_host_days), and their ratio.
-- param from_us Int64: window start, microseconds since the epoch (inclusive)
-- param to_us Int64: window end, microseconds since the epoch (exclusive)
SELECT
    day,
    antagonists,
    machines,
    round(if(machines = 0, 0., antagonists / machines), 4) AS antagonists_per_machine_day
FROM
(
    SELECT day, uniqExact(host) AS machines
    FROM {{DB}}.samples_host_days
    WHERE day >= toDate(toDateTime(intDiv({from_us:Int64}, 1000000)))
      AND day <= toDate(toDateTime(intDiv({to_us:Int64} - 1, 1000000)))
    GROUP BY day
) AS sampled
ANY LEFT JOIN
(
    SELECT event_date AS day, countIf(isNotNull(antagonist_task)) AS antagonists
    FROM {{DB}}.incidents FINAL
    WHERE detected_at_us >= {from_us:Int64} AND detected_at_us < {to_us:Int64}
    GROUP BY day
) AS named USING (day)
ORDER BY day
