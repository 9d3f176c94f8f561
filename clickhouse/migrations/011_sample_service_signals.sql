-- CpiSample schema v4: the service's own signals, from the metrics endpoint the collector scrapes
-- for a task: cpu_per_op (CPU seconds per unit of its work counter) and latency (in the unit of
-- its latency metric). NULL where no endpoint is configured or a scrape gave no value; rows
-- written before v4 have NULL.
ALTER TABLE {{DB}}.samples
    ADD COLUMN cpu_per_op Nullable(Float64) AFTER host_cpus,
    ADD COLUMN latency Nullable(Float64) AFTER cpu_per_op;
