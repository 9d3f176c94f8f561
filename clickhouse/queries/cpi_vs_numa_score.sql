-- CPI against NUMA score per job (seed 004's figure: a better NUMA score goes with a lower CPI):
-- the job's samples by NUMA-score bucket (bucket_width wide, the bucket's lower edge), with their
-- mean and median CPI. Samples without a NUMA score or a CPI are left out.
-- param job String = '': the job; '' = every job
-- param from_us Int64: window start, microseconds since the epoch (inclusive)
-- param to_us Int64: window end, microseconds since the epoch (exclusive)
-- param bucket_width Float64 = 0.1: width of a NUMA-score bucket
SELECT
    job,
    round(floor(assumeNotNull(numa_score) / {bucket_width:Float64} + 1e-9) * {bucket_width:Float64}, 4) AS numa_bucket,
    count() AS samples,
    uniqExact(host, task) AS tasks,
    round(avg(assumeNotNull(cpi)), 4) AS mean_cpi,
    round(quantileExact(0.5)(assumeNotNull(cpi)), 4) AS median_cpi
FROM {{DB}}.samples FINAL
WHERE window_start_us >= {from_us:Int64} AND window_start_us < {to_us:Int64}
  AND numa_score IS NOT NULL AND cpi IS NOT NULL
  AND ({job:String} = '' OR job = {job:String})
GROUP BY job, numa_bucket
ORDER BY job, numa_bucket
