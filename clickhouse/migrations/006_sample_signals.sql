-- CpiSample schema v2: the signals beside CPI (cgroup v2 pressure, resctrl LLC occupancy and
-- memory bandwidth, LLC misses per thousand instructions), each NULL where the collector could
-- not measure it; rows written before v2 have NULL.
ALTER TABLE {{DB}}.samples
    ADD COLUMN cpu_pressure Nullable(Float64) AFTER threads,
    ADD COLUMN memory_pressure Nullable(Float64) AFTER cpu_pressure,
    ADD COLUMN memory_pressure_full Nullable(Float64) AFTER memory_pressure,
    ADD COLUMN llc_occupancy_bytes Nullable(Int64) AFTER memory_pressure_full,
    ADD COLUMN memory_bandwidth_bytes_per_s Nullable(Float64) AFTER llc_occupancy_bytes,
    ADD COLUMN llc_mpki Nullable(Float64) AFTER memory_bandwidth_bytes_per_s;
