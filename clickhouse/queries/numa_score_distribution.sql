-- The fleet's NUMA score distribution (seed 004): tasks' mean NUMA score over the window by bucket
-- (bucket_width wide, the lower edge), how many tasks fall in each and their share of the tasks
-- with a score. A task is a (host, task) pair; tasks without a NUMA score are left out.
-- param from_us Int64: window start, microseconds since the epoch (inclusive)
-- param to_us Int64: window end, microseconds since the epoch (exclusive)
-- param bucket_width Float64 = 0.1: width of a NUMA-score bucket
SELECT
    numa_bucket,
    count() AS tasks,
    round(count() / any(total), 4) AS share
FROM
(
    SELECT round(floor(mean_score / {bucket_width:Float64} + 1e-9) * {bucket_width:Float64}, 4) AS numa_bucket, total
    FROM
    (
        SELECT host, task, avg(assumeNotNull(numa_score)) AS mean_score, 1 AS k
        FROM {{DB}}.samples FINAL
        WHERE window_start_us >= {from_us:Int64} AND window_start_us < {to_us:Int64} AND numa_score IS NOT NULL
        GROUP BY host, task
    ) AS t
    ANY LEFT JOIN
    (
        SELECT count() AS total, 1 AS k
        FROM
        (
            SELECT host, task
            FROM {{DB}}.samples FINAL
            WHERE window_start_us >= {from_us:Int64} AND window_start_us < {to_us:Int64} AND numa_score IS NOT NULL
            GROUP BY host, task
        )
    ) AS c
    USING k
)
GROUP BY numa_bucket
ORDER BY numa_bucket
