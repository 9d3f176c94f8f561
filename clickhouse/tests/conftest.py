"""Backends for the tests: the local ClickHouse server (18.16 here; started with `make up` if it
does not answer) and chdb-core in-process (ClickHouse 26.x). Each test module gets its own
throw-away database on the server, dropped at the end."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
CH_DIR = HERE.parent
ROOT = CH_DIR.parent
FIXTURES = HERE / "fixtures"
sys.path.insert(0, str(CH_DIR))

import chclient  # noqa: E402
import schema  # noqa: E402

URL = os.environ.get("CLICKHOUSE_URL", f"http://127.0.0.1:{os.environ.get('CLICKHOUSE_HTTP_PORT', '8123')}")


def server():
    ch = chclient.HttpClickHouse(URL)
    if not ch.answers():
        subprocess.run(["make", "-C", str(ROOT), "up"], check=False, timeout=600)
    if not ch.answers():
        pytest.fail(f"ClickHouse does not answer at {URL} even after `make -C {ROOT} up`")
    return ch


@pytest.fixture(scope="module", params=["server", "chdb"])
def backend(request, tmp_path_factory):
    """(client, database) with nothing created yet."""
    if request.param == "server":
        ch = server()
        db = f"cpi2_test_{os.getpid()}_{request.module.__name__.rsplit('.', 1)[-1]}"
        ch.query(f"DROP DATABASE IF EXISTS {db}")
        yield ch, db
        ch.query(f"DROP DATABASE IF EXISTS {db}")
    else:
        ch = chclient.ChdbClickHouse(str(tmp_path_factory.mktemp("chdb")))
        yield ch, "cpi2"
        ch.close()


def sink_rows(table):
    """The fixture rows of a table exactly as the Flink sink sends them (JSONEachRow lines)."""
    source = "incidents" if table == "incident_suspects" else table
    rows = [json.loads(line) for line in (FIXTURES / f"{source}.jsonl").read_text().splitlines()]
    if table == "incidents":
        return [_compact({k: v for k, v in r.items() if k != "suspects"}) for r in rows]
    if table == "incident_suspects":
        out = []
        for r in rows:
            for rank, s in enumerate(r["suspects"], 1):
                out.append(_compact({"incident_id": r["incident_id"], "host": r["host"], "detected_at_us": r["detected_at_us"],
                                       "rank": rank, **s}))
        return out
    return [_compact(r) for r in rows]


def _compact(r):
    """JSON as JsonRows writes it: no spaces, fields in schema order."""
    return json.dumps(r, separators=(",", ":"))


SINK_TABLES = ["samples", "specs", "incidents", "incident_suspects", "actions", "outcomes", "dead_letters"]


def insert_rows(ch, db, table, lines):
    ch.query(f"INSERT INTO {db}.{table} FORMAT JSONEachRow", data="\n".join(lines) + "\n")


def insert_host_metrics(ch, db):
    """Telegraf's JSON lines into host_metrics_raw, one line per row (TabSeparated, escaped)."""
    lines = (FIXTURES / "host_metrics.jsonl").read_text().splitlines()
    tsv = "".join(line.replace("\\", "\\\\").replace("\t", "\\t") + "\n" for line in lines)
    ch.query(f"INSERT INTO {db}.host_metrics_raw FORMAT TabSeparated", data=tsv)


def load_fixtures(ch, db):
    for table in SINK_TABLES:
        insert_rows(ch, db, table, sink_rows(table))
    insert_host_metrics(ch, db)


@pytest.fixture(scope="module")
def loaded(backend):
    """(client, database) with the schema applied and the fixture dataset inserted twice (a replay)."""
    ch, db = backend
    schema.apply(ch, db, log=lambda *_: None)
    load_fixtures(ch, db)
    load_fixtures(ch, db)
    return ch, db
