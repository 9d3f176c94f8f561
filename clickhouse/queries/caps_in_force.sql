-- The caps in force at an instant, from the enforcers' actions: per host and task, the last
-- APPLIED, RENEWED or RELEASED at or before the instant is an APPLIED or RENEWED whose expiry is
-- after it (REFUSED, FAILED and DRY_RUN change nothing). capped_since_us is the last APPLIED.
-- Caps last at most 7 days (cpi2ctl cap --duration), so only the 8 days before the instant are read.
-- param at_us Int64: the instant, microseconds since the epoch
-- param host String = '': one host's caps; '' = every host
SELECT
    host,
    task,
    argMax(kind, at_us) AS last_kind,
    argMax(cause, at_us) AS cause,
    argMax(cap_cpu, at_us) AS cap_cpu,
    maxIf(at_us, kind = 'APPLIED') AS capped_since_us,
    argMax(expires_at_us, at_us) AS expires_at_us,
    ifNull(argMax(incident_id, at_us), '') AS incident_id,
    ifNull(argMax(command_id, at_us), '') AS command_id,
    ifNull(argMax(victim_task, at_us), '') AS victim_task
FROM {{DB}}.actions FINAL
WHERE kind IN ('APPLIED', 'RENEWED', 'RELEASED')
  AND at_us <= {at_us:Int64} AND at_us > {at_us:Int64} - 8 * 86400000000
  AND ({host:String} = '' OR host = {host:String})
GROUP BY host, task
HAVING last_kind IN ('APPLIED', 'RENEWED') AND expires_at_us > {at_us:Int64}
ORDER BY host, task
