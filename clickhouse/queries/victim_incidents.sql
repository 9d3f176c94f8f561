-- Every incident of a victim task with its suspects, one row per suspect (rank 1 = highest
-- correlation); an incident without suspects gives one row with rank 0.
-- param victim_task String: victim task, e.g. websearch/0
-- param from_us Int64: window start, microseconds since the epoch (inclusive)
-- param to_us Int64: window end, microseconds since the epoch (exclusive)
-- param signal String = '': the signal incidents were detected on (cpi, cpu_pressure, memory_pressure, llc_mpki); '' = every signal
SELECT
    incident_id,
    host,
    detected_at_us,
    decision,
    round(victim_cpi, 4) AS victim_cpi,
    round(cpi_threshold, 4) AS cpi_threshold,
    ifNull(antagonist_task, '') AS antagonist_task,
    rank,
    suspect_task,
    suspect_job,
    suspect_class,
    round(suspect_correlation, 4) AS suspect_correlation,
    round(suspect_cpu_usage, 4) AS suspect_cpu_usage
FROM
(
    SELECT incident_id, host, detected_at_us, decision, victim_cpi, cpi_threshold, antagonist_task
    FROM {{DB}}.incidents FINAL
    WHERE victim_task = {victim_task:String} AND detected_at_us >= {from_us:Int64} AND detected_at_us < {to_us:Int64}
      AND ({signal:String} = '' OR signal = {signal:String})
) AS i
ALL LEFT JOIN
(
    SELECT incident_id, rank, task AS suspect_task, job AS suspect_job, task_class AS suspect_class,
           correlation AS suspect_correlation, cpu_usage AS suspect_cpu_usage
    FROM {{DB}}.incident_suspects FINAL
    WHERE detected_at_us >= {from_us:Int64} AND detected_at_us < {to_us:Int64}
) AS s
USING incident_id
ORDER BY detected_at_us, incident_id, rank
