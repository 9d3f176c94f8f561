"""Backends for the panel SQL: the local ClickHouse server (18.16; started with `make up` if it
does not answer) and chdb-core in-process (ClickHouse 26.x, what Grafana's plugin talks to in
docker-compose), each with the schema and the fixture rows of clickhouse/tests/fixtures."""
import os
import pathlib
import sys

import pytest

GRAFANA = pathlib.Path(__file__).resolve().parents[1]
ROOT = GRAFANA.parent
for d in (GRAFANA, ROOT / "cli", pathlib.Path(__file__).resolve().parent):
    sys.path.insert(0, str(d))

from cpi2ctl import stacktest  # noqa: E402

import chclient  # noqa: E402


@pytest.fixture(scope="session", params=["server", "chdb"])
def backend(request, tmp_path_factory):
    """(client, database) with the schema and the fixture dataset."""
    if request.param == "server":
        try:
            ch = stacktest.clickhouse()
        except stacktest.StackMissing as e:
            pytest.fail(str(e))
        db = stacktest.database_name("cpi2_grafana_test")
        stacktest.create_fixture_database(ch, db)
        yield ch, db
        ch.query(f"DROP DATABASE IF EXISTS {db}")
    else:
        ch = chclient.ChdbClickHouse(str(tmp_path_factory.mktemp("chdb")))
        stacktest.create_fixture_database(ch, "cpi2")
        yield ch, "cpi2"
        ch.close()
