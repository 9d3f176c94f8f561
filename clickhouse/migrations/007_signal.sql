-- CpiSpec v2 and Incident v4: the signal a spec is of and an incident was detected on (cpi, or a
-- CpiSample signal such as cpu_pressure). A spec of each signal exists per job, platform and
-- period, so the signal joins the specs' ORDER BY (which identifies a record). A column added to
-- the sorting key in the same ALTER may not have a DEFAULT (18.16 and current versions refuse
-- it), so the DEFAULT follows in a second ALTER; rows written before it read 'cpi' (a column
-- missing from a part is computed from its DEFAULT).
ALTER TABLE {{DB}}.specs
    ADD COLUMN signal {{LC(String)}} AFTER weighted_cpu_sum,
    MODIFY ORDER BY (job, platform, period_end_us, signal);
ALTER TABLE {{DB}}.specs MODIFY COLUMN signal {{LC(String)}} DEFAULT 'cpi';
ALTER TABLE {{DB}}.incidents ADD COLUMN signal {{LC(String)}} DEFAULT 'cpi' AFTER machine_cpu_utilization;
-- Each suspect row carries its incident's signal, so the per-suspect queries filter without a join.
ALTER TABLE {{DB}}.incident_suspects ADD COLUMN signal {{LC(String)}} DEFAULT 'cpi' AFTER comoving_cpu;
