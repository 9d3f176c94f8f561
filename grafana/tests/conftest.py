"""Backends for the panel SQL: the local ClickHouse server (18.16; started with `make up` if it
does not answer) and chdb-core in-process (ClickHouse 26.x, what Grafana's plugin talks to in
docker-compose), each with the schema and the fixture rows of clickhouse/tests/fixtures."""

import pytest

from cpi2 import repo
from cpi2.clickhouse import chclient
from cpi2.testing import fixtures

ROOT = repo.ROOT
GRAFANA = ROOT / "grafana"


@pytest.fixture(scope="session", params=["server", "chdb"])
def backend(request, tmp_path_factory):
    """(client, database) with the schema and the fixture dataset."""
    if request.param == "server":
        try:
            ch = fixtures.clickhouse()
        except fixtures.StackMissing as e:
            pytest.fail(str(e))
        db = fixtures.database_name("cpi2_grafana_test")
        fixtures.create_fixture_database(ch, db)
        yield ch, db
        ch.query(f"DROP DATABASE IF EXISTS {db}")
    else:
        ch = chclient.ChdbClickHouse(str(tmp_path_factory.mktemp("chdb")))
        fixtures.create_fixture_database(ch, "cpi2")
        yield ch, "cpi2"
        ch.close()
