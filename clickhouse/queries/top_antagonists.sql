-- Most aggressive antagonists of a job in a time window (paper section 5): the tasks most often
-- suspected in the job's incidents with a correlation of at least min_correlation.
-- param job String: victim job
-- param from_us Int64: window start, microseconds since the epoch (inclusive)
-- param to_us Int64: window end, microseconds since the epoch (exclusive)
-- param min_correlation Float64 = 0.35: suspects below this correlation are ignored
-- param signal String = '': the signal incidents were detected on (cpi, cpu_pressure, memory_pressure, llc_mpki); '' = every signal
-- param limit UInt32 = 20: rows returned
SELECT
    task AS antagonist_task,
    job AS antagonist_job,
    any(task_class) AS antagonist_class,
    count() AS suspected,
    uniqExact(host) AS hosts,
    round(avg(correlation), 4) AS mean_correlation,
    round(max(correlation), 4) AS max_correlation,
    round(avg(cpu_usage), 4) AS mean_cpu_usage
FROM {{DB}}.incident_suspects FINAL
WHERE detected_at_us >= {from_us:Int64} AND detected_at_us < {to_us:Int64}
  AND correlation >= {min_correlation:Float64}
  AND ({signal:String} = '' OR signal = {signal:String})
  AND incident_id IN (
      SELECT incident_id FROM {{DB}}.incidents FINAL
      WHERE victim_job = {job:String} AND detected_at_us >= {from_us:Int64} AND detected_at_us < {to_us:Int64})
GROUP BY task, job
ORDER BY suspected DESC, mean_correlation DESC, antagonist_task
LIMIT {limit:UInt32}
