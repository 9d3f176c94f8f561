"""Fixtures over the real local stack: a throw-away ClickHouse database with the schema and the
fixture rows, and the local Kafka (both started with `make up` when they do not answer)."""

import pytest

from cpi2.testing import fixtures


@pytest.fixture(scope="session")
def ch():
    try:
        return fixtures.clickhouse()
    except fixtures.StackMissing as e:
        pytest.fail(str(e))


@pytest.fixture(scope="session")
def db(ch):
    name = fixtures.database_name("cpi2ctl_test")
    fixtures.create_fixture_database(ch, name)
    yield name
    ch.query(f"DROP DATABASE IF EXISTS {name}")


@pytest.fixture(scope="session")
def kafka():
    try:
        return fixtures.kafka()
    except fixtures.StackMissing as e:
        pytest.fail(str(e))


@pytest.fixture
def cli(ch, capsys):
    """Runs cpi2ctl's main() in-process; returns (exit code, stdout, stderr)."""
    from cpi2.cli import main

    def run(*argv):
        code = main.main(["--clickhouse", ch.url, *argv])
        cap = capsys.readouterr()
        return code, cap.out, cap.err

    return run
