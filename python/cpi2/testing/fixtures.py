"""Helpers for tests over the real local stack (cli/ and grafana/ tests): the servers answer, or
`make -C ROOT up` starts them; a throw-away ClickHouse database with the project's schema
(clickhouse/migrations, applied by clickhouse/schema.py) and the clickhouse engineer's fixture
rows (clickhouse/tests/fixtures, year 2100), inserted as the Flink sink writes them."""

import json
import os
import socket
import subprocess

from cpi2 import repo
from cpi2.clickhouse import chclient, schema

FIXTURES = repo.CLICKHOUSE_DIR / "tests" / "fixtures"
SINK_TABLES = ["samples", "specs", "incidents", "incident_suspects", "actions", "outcomes", "dead_letters"]
# The fixtures' time span (microseconds): 2100-01-01T00:00Z .. 00:20Z.
FIXTURE_FROM_US = 4102444800000000
FIXTURE_TO_US = 4102446000000000


class StackMissing(Exception):
    """A server of the local stack does not answer even after `make up`."""


def _up():
    subprocess.run(
        ["make", "-C", str(repo.ROOT), "up"],
        check=False,
        timeout=900,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def clickhouse(url=None):
    """A client of the local ClickHouse (started with `make up` if it does not answer)."""
    ch = chclient.HttpClickHouse(url or repo.default_clickhouse_url())
    if not ch.answers():
        _up()
    if not ch.answers():
        raise StackMissing(f"ClickHouse does not answer at {ch.url} even after `make -C {repo.ROOT} up`")
    return ch


def kafka(bootstrap=None):
    """The local Kafka's bootstrap address, once its port accepts connections (after `make up`)."""
    bootstrap = bootstrap or repo.default_kafka_bootstrap()
    host, port = bootstrap.rsplit(":", 1)

    def answers():
        try:
            with socket.create_connection((host, int(port)), timeout=3):
                return True
        except OSError:
            return False

    if not answers():
        _up()
    if not answers():
        raise StackMissing(f"Kafka does not answer at {bootstrap} even after `make -C {repo.ROOT} up`")
    return bootstrap


def kafka_client_file(principal):
    """The local stack's client file of a Kafka principal, '' when the stack has none."""
    return repo.kafka_client_file(principal) or ""


def kafka_conf(bootstrap, principal="admin", **extra):
    """confluent-kafka settings of a principal of the local stack: bootstrap plus its client file."""
    path = kafka_client_file(principal)
    return {**(repo.read_client_file(path) if path else {}), "bootstrap.servers": bootstrap, **extra}


def sink_rows(table):
    """The fixture rows of a table as JSONEachRow lines (incidents' suspects exploded with a rank)."""
    source = "incidents" if table == "incident_suspects" else table
    rows = [json.loads(line) for line in (FIXTURES / f"{source}.jsonl").read_text().splitlines() if line.strip()]
    if table == "incidents":
        rows = [{k: v for k, v in r.items() if k != "suspects"} for r in rows]
    elif table == "incident_suspects":
        rows = [
            {
                "incident_id": r["incident_id"],
                "host": r["host"],
                "detected_at_us": r["detected_at_us"],
                "signal": r["signal"],
                "rank": rank,
                **s,
            }
            for r in rows
            for rank, s in enumerate(r["suspects"], 1)
        ]
    return [json.dumps(r, separators=(",", ":")) for r in rows]


def insert_rows(ch, db, table, lines):
    """JSONEachRow lines into db.table."""
    ch.query(f"INSERT INTO {db}.{table} FORMAT JSONEachRow", data="\n".join(lines) + "\n")


def insert_fixture_rows(ch, db):
    """Every fixture row into db, which has the schema (host metrics through the raw table)."""
    for table in SINK_TABLES:
        insert_rows(ch, db, table, sink_rows(table))
    lines = (FIXTURES / "host_metrics.jsonl").read_text().splitlines()
    tsv = "".join(line.replace("\\", "\\\\").replace("\t", "\\t") + "\n" for line in lines if line.strip())
    ch.query(f"INSERT INTO {db}.host_metrics_raw FORMAT TabSeparated", data=tsv)


def create_fixture_database(ch, db):
    """Drops and creates db with the schema and the fixture rows."""
    schema.drop_database(ch, db)
    schema.apply(ch, db, log=lambda *_: None)
    insert_fixture_rows(ch, db)


def database_name(prefix):
    return f"{prefix}_{os.getpid()}"
