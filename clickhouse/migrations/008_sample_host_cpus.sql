-- CpiSample schema v3: host_cpus, the CPUs online on the sample's host (NULL where unknown; rows
-- written before v3 have NULL). Incidents store the host's task CPU usage as a sum of
-- CPU-sec/sec; divided by this it is the host's utilisation (paper figure 14).
ALTER TABLE {{DB}}.samples ADD COLUMN host_cpus Nullable(Int32) AFTER llc_mpki;
