-- Incident schema v3: each suspect has its co-moving CPU (the CPU-sec/sec of its usage that moves
-- with the victim's CPI). Rows written before v3 have NULL.
ALTER TABLE {{DB}}.incident_suspects ADD COLUMN comoving_cpu Nullable(Float64) AFTER lift;
