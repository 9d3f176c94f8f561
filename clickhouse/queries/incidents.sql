-- Incidents in a window, newest first, with filters, and what the victim's host's enforcer did
-- about each (its first action naming the incident: APPLIED, RENEWED, REFUSED, ...; '' = none yet).
-- param from_us Int64: window start, microseconds since the epoch (inclusive)
-- param to_us Int64: window end, microseconds since the epoch (exclusive)
-- param host String = '': one host; '' = every host
-- param job String = '': the victim's job; '' = every job
-- param task String = '': the victim task; '' = every task
-- param decision String = '': THROTTLE, NO_SUSPECT_ABOVE_THRESHOLD, ...; '' = every decision
-- param signal String = '': the signal incidents were detected on (cpi, cpu_pressure, memory_pressure, llc_mpki); '' = every signal
-- param limit UInt32 = 100: at most this many incidents
SELECT
    incident_id,
    detected_at_us,
    host,
    signal,
    victim_task,
    victim_job,
    round(victim_cpi, 4) AS victim_value,
    round(cpi_threshold, 4) AS threshold,
    decision,
    ifNull(antagonist_task, '') AS antagonist_task,
    action
FROM
(
    SELECT incident_id, detected_at_us, host, signal, victim_task, victim_job, victim_cpi, cpi_threshold, decision,
           antagonist_task
    FROM {{DB}}.incidents FINAL
    WHERE detected_at_us >= {from_us:Int64} AND detected_at_us < {to_us:Int64}
      AND ({host:String} = '' OR host = {host:String})
      AND ({job:String} = '' OR victim_job = {job:String})
      AND ({task:String} = '' OR victim_task = {task:String})
      AND ({decision:String} = '' OR decision = {decision:String})
      AND ({signal:String} = '' OR signal = {signal:String})
) AS i
ALL LEFT JOIN
(
    SELECT assumeNotNull(incident_id) AS incident_id, argMin(kind, at_us) AS action
    FROM {{DB}}.actions FINAL
    WHERE incident_id IS NOT NULL AND at_us >= {from_us:Int64}
    GROUP BY incident_id
) AS a
USING incident_id
ORDER BY detected_at_us DESC, incident_id
LIMIT {limit:UInt32}
