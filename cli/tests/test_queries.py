"""cpi2ctl query ... against the real local ClickHouse, over the fixture dataset (year 2100)."""

import json

import pytest

from cpi2 import repo
from cpi2.clickhouse import forensics

WINDOW = ["--from", "2100-01-01T00:00:00Z", "--to", "2100-01-01T00:20:00Z"]


def test_every_forensics_query_has_a_subcommand(cli):
    with pytest.raises(SystemExit):
        cli("query", "--help")
    # argparse wrote the help to stdout through capsys; every query is listed by its CLI name.
    for name in forensics.names():
        with pytest.raises(SystemExit) as e:
            cli("query", name.replace("_", "-"), "--help")
        assert e.value.code == 0


def test_top_antagonists_json_matches_the_query_file(cli, db, ch):
    code, out, err = cli("--database", db, "query", "top-antagonists", "--job", "websearch", *WINDOW, "-o", "json")
    assert code == 0, err
    rows = json.loads(out)
    cols, expected = forensics.run(
        "top_antagonists",
        {"job": "websearch", "from_us": 4102444800000000, "to_us": 4102446000000000},
        url=ch.url,
        database=db,
    )
    assert rows == [dict(zip(cols, r)) for r in expected]
    # The fixture's worst antagonist of websearch (clickhouse/queries/top_antagonists.reference).
    reference = (repo.CLICKHOUSE_DIR / "queries" / "top_antagonists.reference").read_text().splitlines()
    assert rows[0]["antagonist_task"] == reference[1].split("\t")[0]
    assert len(rows) == len(reference) - 1


def test_table_output_shows_times_as_iso(cli, db):
    code, out, err = cli("--database", db, "query", "victim-incidents", "--victim-task", "websearch/0", *WINDOW)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["incident_id", "host", "detected_at_us"]
    assert "2100-01-01T00:09:00Z" in lines[1]  # detected_at_us 4102445340000000 of h1-websearch/0-1
    assert lines[-1] == f"({len(lines) - 2} rows)"


def test_options_are_passed_and_validated(cli, db):
    code, out, err = cli(
        "--database",
        db,
        "query",
        "top-antagonists",
        "--job",
        "websearch",
        *WINDOW,
        "--min-correlation",
        "0.6",
        "-o",
        "json",
    )
    assert code == 0, err
    rows = json.loads(out)
    assert rows and all(r["max_correlation"] >= 0.6 for r in rows)
    code, out, err = cli("--database", db, "query", "top-antagonists", "--job", "websearch", *WINDOW, "--limit", "-1")
    assert code == 2 and "limit" in err


def test_unknown_job_gives_no_rows(cli, db):
    code, out, err = cli("--database", db, "query", "top-antagonists", "--job", "no-such-job", *WINDOW, "-o", "json")
    assert (code, json.loads(out)) == (0, [])


def test_bad_time_range(cli, db):
    code, out, err = cli(
        "--database",
        db,
        "query",
        "top-antagonists",
        "--job",
        "websearch",
        "--from",
        "2100-01-01T00:20:00Z",
        "--to",
        "2100-01-01T00:00:00Z",
    )
    assert code == 2
    assert "bad time range" in err and out == ""
    code, out, err = cli("--database", db, "query", "top-antagonists", "--job", "websearch", "--from", "last tuesday")
    assert code == 2 and "'last tuesday' not understood" in err


def test_unreachable_clickhouse_is_named(cli):
    from cpi2.cli import main

    code = main.main(["--clickhouse", "http://127.0.0.1:1", "query", "fp-rates-by-threshold"])
    assert code == 1


def test_unreachable_clickhouse_message(capsys):
    from cpi2.cli import main

    assert main.main(["--clickhouse", "http://127.0.0.1:1", "query", "fp-rates-by-threshold"]) == 1
    assert "ClickHouse unreachable at http://127.0.0.1:1" in capsys.readouterr().err


def test_sql_option_prints_the_rendered_query(cli):
    code, out, err = cli("--database", "somedb", "query", "relative-cpi-distribution", *WINDOW, "--sql")
    assert code == 0
    assert (
        forensics.render(
            "relative_cpi_distribution", {"from_us": 4102444800000000, "to_us": 4102446000000000}, "somedb"
        )
        == out.strip()
    )


def test_signal_filters_the_incidents(cli, db):
    """--signal: the fixture's incidents are all of CPI, so cpi finds them and cpu_pressure none."""
    args = ("--database", db, "query", "victim-incidents", "--victim-task", "websearch/0", *WINDOW, "-o", "json")
    code, everything, err = cli(*args)
    assert code == 0, err
    code, cpi, err = cli(*args, "--signal", "cpi")
    assert code == 0, err
    assert json.loads(cpi) == json.loads(everything) != []
    code, pressure, err = cli(*args, "--signal", "cpu_pressure")
    assert (code, json.loads(pressure)) == (0, [])
