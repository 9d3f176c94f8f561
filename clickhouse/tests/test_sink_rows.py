"""The tables accept rows exactly as the Flink sink writes them, replays do not change what FINAL
queries see, the rollup view fills, and Telegraf's JSON lines become host_metrics rows."""

from conftest import SINK_TABLES, insert_rows, sink_rows


def test_every_sink_table_holds_its_fixture_rows_once_after_a_replay(loaded):
    ch, db = loaded  # fixtures inserted twice
    for table in SINK_TABLES:
        final = int(ch.query(f"SELECT count() FROM {db}.{table} FINAL"))
        assert final == len(sink_rows(table)), table
        raw = int(ch.query(f"SELECT count() FROM {db}.{table}"))
        assert raw in (final, 2 * final), table  # 2x until a background merge


def test_a_replay_with_new_values_replaces_the_first_copy(loaded):
    ch, db = loaded
    row = sink_rows("samples")[0].replace('"cpu_usage":0.5,', '"cpu_usage":0.75,')
    assert row != sink_rows("samples")[0]
    insert_rows(ch, db, "samples", [row])
    got = ch.query(
        f"SELECT count(), any(cpu_usage) FROM {db}.samples FINAL WHERE host = 'h1' AND task = 'websearch/0'"
        " AND window_start_us = 4102444800000000"
    )
    assert got.split() == ["1", "0.75"]
    insert_rows(ch, db, "samples", [sink_rows("samples")[0]])  # back to the fixture


def test_values_survive_the_round_trip(loaded):
    ch, db = loaded
    assert (
        ch.query(f"SELECT payload, reason FROM {db}.dead_letters FINAL WHERE offset = 42")
        == "wwEA\tnot Avro\\nsingle-object\n"
    )
    got = ch.query(
        f"SELECT excluded_tasks, antagonist_task, cap_duration_s, toString(event_date) FROM {db}.incidents FINAL"
        " WHERE incident_id = 'h1-websearch/0-3'"
    )
    assert got == "[]\t\\N\t\\N\t2100-01-01\n"
    nulls = ch.query(f"SELECT countIf(cpi IS NULL), countIf(llc_misses IS NULL) FROM {db}.samples FINAL")
    assert nulls.split() == ["7", "480"]


def test_unknown_fields_are_skipped_like_the_sink_asks(loaded):
    ch, db = loaded
    row = sink_rows("specs")[0].replace('"job":"websearch"', '"job":"newjob"').rstrip("}") + ',"added_in_v2":1}'
    insert_rows(ch, db, "specs", [row])
    assert ch.query(f"SELECT count() FROM {db}.specs FINAL WHERE job = 'newjob'").strip() == "1"


def test_rollup_per_job_platform_minute(loaded):
    ch, db = loaded
    got = ch.query(
        f"SELECT job, platform, count() AS minutes, sum(n), max(t) FROM (SELECT job, platform, minute, countMerge(samples) AS n,"
        f" uniqMerge(tasks) AS t FROM {db}.samples_1m GROUP BY job, platform, minute) GROUP BY job, platform ORDER BY job, platform"
    )
    lines = [line.split("\t") for line in got.splitlines()]
    assert [line[:3] for line in lines] == [
        ["mapreduce", "p1", "20"],
        ["video", "p1", "20"],
        ["websearch", "p1", "20"],
        ["websearch", "p2", "20"],
    ]
    # 120 samples per task, inserted twice by the replay (the view counts inserts; websearch/0 lacks 8 CPIs)
    assert [int(line[3]) for line in lines][:3] >= [240, 240, 224]


def test_telegraf_lines_become_host_metrics(loaded):
    ch, db = loaded
    got = ch.query(
        f"SELECT name, cpu, timestamp_ms, usage_user, usage_idle, used_percent, load1, load15, n_cpus"
        f" FROM {db}.host_metrics FINAL ORDER BY timestamp_ms, name, host"
    )
    assert got.splitlines() == [
        "cpu\tcpu-total\t4102444800000\t61.5\t17\t\\N\t\\N\t\\N\t\\N",
        "mem\t\t4102444800000\t\\N\t\\N\t43.5\t\\N\t\\N\t\\N",
        "system\t\t4102444810000\t\\N\t\\N\t\\N\t1.5\t0.75\t8",
        "system\t\t4102444820000\t\\N\t\\N\t\\N\t20.5\t17.25\t32",
        "cpu\tcpu-total\t4102444980000\t70\t11.5\t\\N\t\\N\t\\N\t\\N",
    ]
