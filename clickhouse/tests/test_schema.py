"""Migrations apply on the local server and on chdb-core, a second run is a no-op, the features a
server lacks are left out, and retention drops old partitions where TTL does not exist."""

import pytest
from conftest import insert_rows, load_fixtures, sink_rows

from cpi2.clickhouse import schema


def columns(ch, db, table):
    return [line.split("\t")[:2] for line in ch.query(f"DESCRIBE TABLE {db}.{table}").splitlines()]


def test_apply_twice_second_is_a_noop(backend):
    ch, db = backend
    first = schema.apply(ch, db, log=lambda *_: None)
    assert first == [v for v, _, _ in schema.migrations()] and first[0] == 1
    assert schema.apply(ch, db, log=lambda *_: None) == []
    n = str(len(schema.migrations()))
    assert ch.query(f"SELECT count(), max(version) FROM {db}.schema_migrations").split() == [n, n]
    tables = set(ch.query(f"SHOW TABLES FROM {db}").split())
    assert {
        "samples",
        "specs",
        "incidents",
        "incident_suspects",
        "actions",
        "outcomes",
        "dead_letters",
        "host_metrics",
        "samples_1m",
        "samples_1m_mv",
        "host_metrics_mv",
        "schema_migrations",
    } <= tables
    assert not any(t.startswith("_cpi2_probe") for t in tables)


def test_features_follow_the_server(backend):
    ch, db = backend
    schema.apply(ch, db, log=lambda *_: None)
    features = schema.probe(ch, db)
    ddl = ch.query(f"SHOW CREATE TABLE {db}.samples")
    assert ("TTL" in ddl) == features["TTL"]
    assert ("CODEC" in ddl) == features["CODEC"]
    assert ("LowCardinality" in ddl) == features["LC"]
    version = ch.query("SELECT version()").strip()
    if version.startswith("18."):
        assert features == {"LC": False, "CODEC": False, "TTL": False}
    else:
        assert features == {"LC": True, "CODEC": True, "TTL": True}


def test_sink_columns_match_the_avro_fields(backend):
    """Every Avro field of each record is a column of its table (the sink's JSONEachRow keys)."""
    import json

    from conftest import ROOT

    ch, db = backend
    schema.apply(ch, db, log=lambda *_: None)
    avro = {
        "samples": "CpiSample",
        "specs": "CpiSpec",
        "incidents": "Incident",
        "actions": "EnforcementAction",
        "outcomes": "CapOutcome",
        "dead_letters": "DeadLetter",
    }
    for table, record in avro.items():
        fields = [f["name"] for f in json.loads((ROOT / "schemas" / "avro" / f"{record}.avsc").read_text())["fields"]]
        if table == "incidents":
            fields.remove("suspects")
        cols = [c for c, _ in columns(ch, db, table)]
        assert [f for f in fields if f not in cols] == [], table
    cols = [c for c, _ in columns(ch, db, "incident_suspects")]
    assert cols[:12] == [
        "incident_id",
        "host",
        "detected_at_us",
        "rank",
        "task",
        "job",
        "task_class",
        "correlation",
        "cpu_usage",
        "lift",
        "comoving_cpu",
        "chance",
    ]


def test_changed_migration_is_refused(backend, monkeypatch):
    ch, db = backend
    schema.apply(ch, db, log=lambda *_: None)
    real = schema.migrations()
    monkeypatch.setattr(schema, "migrations", lambda: [(v, n, t + "\n-- edited") for v, n, t in real])
    with pytest.raises(ValueError, match="changed after it was applied"):
        schema.apply(ch, db, log=lambda *_: None)


def test_retention_drops_old_partitions_without_ttl(backend):
    ch, db = backend
    schema.apply(ch, db, log=lambda *_: None)
    load_fixtures(ch, db)
    assert schema.retention_days()["samples"] == 30 and schema.retention_days()["incidents"] == 400
    dropped = schema.retention(ch, db, today="2100-03-01", log=lambda *_: None)
    if schema.probe(ch, db)["TTL"]:
        assert dropped == []
        return
    assert ("samples", "21000101") in dropped and not any(t == "incidents" for t, _ in dropped)
    assert ch.query(f"SELECT count() FROM {db}.samples").strip() == "0"
    assert ch.query(f"SELECT count() FROM {db}.incidents").strip() == str(len(sink_rows("incidents")))


def test_host_days_copy_older_samples_then_follow_inserts(backend, monkeypatch):
    """Migration 009 copies the machines of the samples stored before it, and its view adds those
    of every later insert (a replay adds no machine)."""
    ch, db = backend
    db = db + "_upgrade"
    schema.drop_database(ch, db)
    real = schema.migrations()
    monkeypatch.setattr(schema, "migrations", lambda: [m for m in real if m[0] < 9])
    schema.apply(ch, db, log=lambda *_: None)
    insert_rows(ch, db, "samples", sink_rows("samples"))
    monkeypatch.setattr(schema, "migrations", lambda: real)
    assert 9 in schema.apply(ch, db, log=lambda *_: None)
    days = f"SELECT day, host, maxMerge(host_cpus) FROM {db}.samples_host_days GROUP BY day, host ORDER BY day, host"
    assert ch.query(days).splitlines() == ["2100-01-01\th1\t8", "2100-01-01\th2\t16"]
    later = [
        line.replace('"host":"h1"', '"host":"h9"').replace(
            '"window_start_us":4102444800000000', '"window_start_us":4102531200000000'
        )
        for line in sink_rows("samples")[:1]
    ]
    insert_rows(ch, db, "samples", later + sink_rows("samples"))
    assert ch.query(days).splitlines() == ["2100-01-01\th1\t8", "2100-01-01\th2\t16", "2100-01-02\th9\t8"]
    schema.drop_database(ch, db)
