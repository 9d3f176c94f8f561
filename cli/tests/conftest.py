"""Fixtures over the real local stack: a throw-away ClickHouse database with the schema and the
fixture rows, and the local Kafka (both started with `make up` when they do not answer)."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from cpi2ctl import stacktest  # noqa: E402


@pytest.fixture(scope="session")
def ch():
    try:
        return stacktest.clickhouse()
    except stacktest.StackMissing as e:
        pytest.fail(str(e))


@pytest.fixture(scope="session")
def db(ch):
    name = stacktest.database_name("cpi2ctl_test")
    stacktest.create_fixture_database(ch, name)
    yield name
    ch.query(f"DROP DATABASE IF EXISTS {name}")


@pytest.fixture(scope="session")
def kafka():
    try:
        return stacktest.kafka()
    except stacktest.StackMissing as e:
        pytest.fail(str(e))


@pytest.fixture
def cli(ch, capsys):
    """Runs cpi2ctl's main() in-process; returns (exit code, stdout, stderr)."""
    from cpi2ctl import main

    def run(*argv):
        code = main.main(["--clickhouse", ch.url, *argv])
        cap = capsys.readouterr()
        return code, cap.out, cap.err

    return run
