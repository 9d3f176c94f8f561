-- Incident schema v2: each suspect has a lift (its correlation minus a constant-usage
-- bystander's over the same samples). Rows written before v2 have NULL.
ALTER TABLE {{DB}}.incident_suspects ADD COLUMN lift Nullable(Float64) AFTER cpu_usage;
