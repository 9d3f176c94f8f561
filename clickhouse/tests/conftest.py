"""Backends for the tests: the local ClickHouse server (18.16 here; started with `make up` if it
does not answer) and chdb-core in-process (ClickHouse 26.x). Each test module gets its own
throw-away database on the server, dropped at the end."""

import os

import pytest

from cpi2 import repo
from cpi2.clickhouse import chclient, schema
from cpi2.testing import fixtures

ROOT = repo.ROOT
CH_DIR = repo.CLICKHOUSE_DIR

URL = os.environ.get("CLICKHOUSE_URL", f"http://127.0.0.1:{os.environ.get('CLICKHOUSE_HTTP_PORT', '8123')}")


def server():
    try:
        return fixtures.clickhouse(URL)
    except fixtures.StackMissing as e:
        pytest.fail(str(e))


@pytest.fixture(scope="module", params=["server", "chdb"])
def backend(request, tmp_path_factory):
    """(client, database) with nothing created yet."""
    if request.param == "server":
        ch = server()
        db = f"cpi2_test_{os.getpid()}_{request.module.__name__.rsplit('.', 1)[-1]}"
        schema.drop_database(ch, db)
        yield ch, db
        schema.drop_database(ch, db)
    else:
        ch = chclient.ChdbClickHouse(str(tmp_path_factory.mktemp("chdb")))
        yield ch, "cpi2"
        ch.close()


# The fixture rows exactly as the sink writes them, and their inserts: one copy, in cpi2.testing.
sink_rows = fixtures.sink_rows
insert_rows = fixtures.insert_rows
load_fixtures = fixtures.insert_fixture_rows
SINK_TABLES = fixtures.SINK_TABLES


@pytest.fixture(scope="module")
def loaded(backend):
    """(client, database) with the schema applied and the fixture dataset inserted twice (a replay)."""
    ch, db = backend
    schema.apply(ch, db, log=lambda *_: None)
    load_fixtures(ch, db)
    load_fixtures(ch, db)
    return ch, db
