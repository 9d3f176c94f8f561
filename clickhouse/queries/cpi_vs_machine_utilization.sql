-- Victim CPI against the machine's CPU utilisation at detection (paper figure 14): incidents in
-- 10 % utilisation buckets, with the victim CPI relative to its job's spec mean.
-- Incidents without a measured victim CPI (victim_cpi 0, e.g. VICTIM_CPU_TOO_LOW) are left out.
-- param job String = '': victim job ('' = every job)
-- param signal String = 'cpi': the signal incidents were detected on (victim_cpi is that signal's); '' = every signal
-- param from_us Int64: window start, microseconds since the epoch (inclusive)
-- param to_us Int64: window end, microseconds since the epoch (exclusive)
SELECT
    least(floor(assumeNotNull(machine_cpu_utilization) * 10), 9) / 10 AS utilization_bucket,
    count() AS incidents,
    round(avg(victim_cpi), 4) AS mean_victim_cpi,
    round(avg(victim_cpi / spec_mean), 4) AS mean_relative_cpi,
    round(max(victim_cpi / spec_mean), 4) AS max_relative_cpi
FROM {{DB}}.incidents FINAL
WHERE detected_at_us >= {from_us:Int64} AND detected_at_us < {to_us:Int64}
  AND machine_cpu_utilization IS NOT NULL AND spec_mean > 0 AND victim_cpi > 0
  AND ({job:String} = '' OR victim_job = {job:String})
  AND ({signal:String} = '' OR signal = {signal:String})
GROUP BY utilization_bucket
ORDER BY utilization_bucket
