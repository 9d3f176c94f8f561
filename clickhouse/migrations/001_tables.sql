-- Tables that receive the Flink sink's rows (INSERT INTO cpi2.<table> FORMAT JSONEachRow).
-- Columns are the Avro field names of schemas/avro/*.avsc: enums as strings, ["null",X] as
-- Nullable(X), booleans as UInt8, bytes as base64 String, timestamps Int64 microseconds.
-- Derived columns (event_date, ts) are MATERIALIZED: the sink never sends them.
-- Every table is a ReplacingMergeTree whose ORDER BY identifies one record and whose partition
-- is a function of that identity, so a replayed insert replaces its first copy; queries read
-- with FINAL. Markers {{...}} are filled by apply.py according to what the server supports.

CREATE TABLE IF NOT EXISTS {{DB}}.samples (
    host {{LC(String)}},
    task String,
    job {{LC(String)}},
    task_id String,
    platform {{LC(String)}},
    task_class {{LC(String)}},
    is_protected UInt8,
    window_start_us Int64 {{CODEC(Delta, ZSTD)}},
    window_us Int64,
    cycles Int64,
    instructions Int64,
    counter_source {{LC(String)}},
    time_running_ratio Float64,
    cpu_usage Float64,
    cpi Nullable(Float64),
    llc_misses Nullable(Int64),
    numa_score Nullable(Float64),
    threads Nullable(Int32),
    event_date Date MATERIALIZED toDate(toDateTime(intDiv(window_start_us, 1000000))),
    ts DateTime MATERIALIZED toDateTime(intDiv(window_start_us, 1000000))
) ENGINE = ReplacingMergeTree
PARTITION BY event_date
ORDER BY (host, task, window_start_us)
{{TTL(event_date + INTERVAL 30 DAY)}};

CREATE TABLE IF NOT EXISTS {{DB}}.specs (
    job {{LC(String)}},
    platform {{LC(String)}},
    period_end_us Int64,
    num_samples Int64,
    num_tasks Int32,
    eligible_tasks Int32,
    cpu_usage_mean Float64,
    cpi_mean Float64,
    cpi_stddev Float64,
    usable UInt8,
    weighted_count Float64,
    weighted_sum Float64,
    weighted_sum_sq Float64,
    weighted_cpu_sum Float64,
    event_date Date MATERIALIZED toDate(toDateTime(intDiv(period_end_us, 1000000)))
) ENGINE = ReplacingMergeTree
PARTITION BY event_date
ORDER BY (job, platform, period_end_us)
{{TTL(event_date + INTERVAL 400 DAY)}};

CREATE TABLE IF NOT EXISTS {{DB}}.incidents (
    incident_id String,
    host {{LC(String)}},
    detected_at_us Int64,
    round Int32,
    victim_task String,
    victim_job {{LC(String)}},
    victim_platform {{LC(String)}},
    victim_class {{LC(String)}},
    victim_protected UInt8,
    victim_cpi Float64,
    victim_cpu_usage Float64,
    cpi_threshold Float64,
    spec_mean Float64,
    spec_stddev Float64,
    window_start_us Int64,
    window_end_us Int64,
    excluded_tasks Array(String),
    decision {{LC(String)}},
    antagonist_task Nullable(String),
    antagonist_job Nullable(String),
    antagonist_class Nullable(String),
    correlation Nullable(Float64),
    cap_cpu Nullable(Float64),
    cap_duration_s Nullable(Int32),
    machine_cpu_utilization Nullable(Float64),
    event_date Date MATERIALIZED toDate(toDateTime(intDiv(detected_at_us, 1000000)))
) ENGINE = ReplacingMergeTree
PARTITION BY event_date
ORDER BY (victim_job, victim_task, detected_at_us, incident_id)
{{TTL(event_date + INTERVAL 400 DAY)}};

-- One row per suspect of an incident (rank 1 = highest correlation), as JsonRows.suspects writes.
CREATE TABLE IF NOT EXISTS {{DB}}.incident_suspects (
    incident_id String,
    host {{LC(String)}},
    detected_at_us Int64,
    rank Int32,
    task String,
    job {{LC(String)}},
    task_class {{LC(String)}},
    correlation Float64,
    cpu_usage Float64,
    event_date Date MATERIALIZED toDate(toDateTime(intDiv(detected_at_us, 1000000)))
) ENGINE = ReplacingMergeTree
PARTITION BY event_date
ORDER BY (job, detected_at_us, incident_id, rank)
{{TTL(event_date + INTERVAL 400 DAY)}};

CREATE TABLE IF NOT EXISTS {{DB}}.actions (
    action_id String,
    host {{LC(String)}},
    at_us Int64,
    kind {{LC(String)}},
    cause {{LC(String)}},
    task String,
    incident_id Nullable(String),
    command_id Nullable(String),
    victim_task Nullable(String),
    victim_job Nullable(String),
    cap_cpu Nullable(Float64),
    period_us Nullable(Int64),
    expires_at_us Nullable(Int64),
    previous_limit Nullable(String),
    reason String,
    event_date Date MATERIALIZED toDate(toDateTime(intDiv(at_us, 1000000)))
) ENGINE = ReplacingMergeTree
PARTITION BY event_date
ORDER BY (host, task, at_us, kind, action_id)
{{TTL(event_date + INTERVAL 400 DAY)}};

CREATE TABLE IF NOT EXISTS {{DB}}.outcomes (
    action_id String,
    incident_id Nullable(String),
    host {{LC(String)}},
    judged_at_us Int64,
    victim_task String,
    victim_job {{LC(String)}},
    victim_class {{LC(String)}},
    antagonist_task String,
    correlation Nullable(Float64),
    cpi_before Float64,
    cpi_during Float64,
    relative_cpi Float64,
    spec_stddev Float64,
    samples_before Int32,
    samples_during Int32,
    verdict {{LC(String)}},
    event_date Date MATERIALIZED toDate(toDateTime(intDiv(judged_at_us, 1000000)))
) ENGINE = ReplacingMergeTree
PARTITION BY event_date
ORDER BY (victim_job, judged_at_us, action_id)
{{TTL(event_date + INTERVAL 400 DAY)}};

-- at_us is when Flink rejected the record: a replay may give it another day, so a duplicate can
-- survive FINAL across midnight; (source_topic, partition, offset) identifies the bad record.
CREATE TABLE IF NOT EXISTS {{DB}}.dead_letters (
    at_us Int64,
    component {{LC(String)}},
    source_topic {{LC(String)}},
    partition Int32,
    offset Int64,
    reason String,
    payload String,
    event_date Date MATERIALIZED toDate(toDateTime(intDiv(at_us, 1000000)))
) ENGINE = ReplacingMergeTree
PARTITION BY event_date
ORDER BY (source_topic, partition, offset)
{{TTL(event_date + INTERVAL 30 DAY)}};
