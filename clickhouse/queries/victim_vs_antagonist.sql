-- A victim's CPI (or another signal: victim_cpi is the value of the signal asked for) next to an
-- antagonist's CPU usage on one host over time, with the antagonist's caps (paper figure 9). A cap runs from an APPLIED or RENEWED action to its expiry or to the
-- next RELEASED action of that task, whichever comes first; capped = 1 when a cap covers any
-- sample of the bucket, cap_cpu is the largest cap in force then (0 if none). antagonist_threads:
-- the antagonist's mean thread count (NULL where not reported), for the lame-duck case (section
-- 6.2, figure 12b: threads pile up under a cap, then fall while the task offloads its work).
-- param host String: the machine
-- param victim_task String: victim task
-- param antagonist_task String: antagonist task
-- param from_us Int64: window start, microseconds since the epoch (inclusive)
-- param to_us Int64: window end, microseconds since the epoch (exclusive)
-- param bucket_s UInt32 = 60: time bucket, seconds
-- param signal String = 'cpi': the victim's signal shown as victim_cpi (cpi, cpu_pressure, memory_pressure, llc_mpki)
WITH
    (
        SELECT groupArray(tuple(start_us, end_us, cap))
        FROM
        (
            SELECT
                at_us AS start_us,
                ifNull(cap_cpu, 0.) AS cap,
                arrayReduce('min', arrayConcat([ifNull(expires_at_us, at_us)], arrayFilter(r -> r > at_us,
                    (SELECT groupArray(at_us) FROM {{DB}}.actions FINAL
                     WHERE host = {host:String} AND task = {antagonist_task:String} AND kind = 'RELEASED')))) AS end_us
            FROM {{DB}}.actions FINAL
            WHERE host = {host:String} AND task = {antagonist_task:String} AND kind IN ('APPLIED', 'RENEWED')
              AND at_us < {to_us:Int64}
        )
    ) AS caps
SELECT
    intDiv(window_start_us, {bucket_s:UInt32} * 1000000) * ({bucket_s:UInt32} * 1000000) AS bucket_start_us,
    round(avgIf(multiIf({signal:String} = 'cpu_pressure', cpu_pressure, {signal:String} = 'memory_pressure', memory_pressure,
                        {signal:String} = 'llc_mpki', llc_mpki, cpi), task = {victim_task:String}), 4) AS victim_cpi,
    round(avgIf(cpu_usage, task = {antagonist_task:String}), 4) AS antagonist_cpu_usage,
    round(avgIf(threads, task = {antagonist_task:String}), 1) AS antagonist_threads,
    max(arrayExists(c -> window_start_us >= tupleElement(c, 1) AND window_start_us < tupleElement(c, 2), caps)) AS capped,
    max(arrayReduce('max', arrayConcat([0.], arrayMap(c -> if(window_start_us >= tupleElement(c, 1) AND window_start_us < tupleElement(c, 2), tupleElement(c, 3), 0.), caps)))) AS cap_cpu
FROM {{DB}}.samples FINAL
WHERE host = {host:String} AND task IN ({victim_task:String}, {antagonist_task:String})
  AND window_start_us >= {from_us:Int64} AND window_start_us < {to_us:Int64}
GROUP BY bucket_start_us
ORDER BY bucket_start_us
