-- Incident v5: analysed_at_us, the host's event time when the correlator ran the analysis (the
-- wait of a queued analysis is analysed_at_us - detected_at_us). Rows written before v5 have NULL.
ALTER TABLE {{DB}}.incidents ADD COLUMN analysed_at_us Nullable(Int64) AFTER signal;
