-- CpiSpec v3: a spec re-baselined on a job-wide shift says so (shift_ratio, 1 for a spec learnt
-- from the data; shift_share, the share of the job's hosts off the spec). Incident v6: each
-- suspect has the chance of its co-movement with the victim's CPI (the stand-out gate's test).
-- Rows written before have 1, NULL and NULL.
ALTER TABLE {{DB}}.specs ADD COLUMN shift_ratio Float64 DEFAULT 1;
ALTER TABLE {{DB}}.specs ADD COLUMN shift_share Nullable(Float64) AFTER shift_ratio;
ALTER TABLE {{DB}}.incident_suspects ADD COLUMN chance Nullable(Float64) AFTER comoving_cpu;
