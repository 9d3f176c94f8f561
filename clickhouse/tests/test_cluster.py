"""The ClickHouse cluster of the multi-node profile (issue 25): the forensics queries answer as on
one server, a record written twice is folded on its shard, and with one replica killed (kill -9)
the queries still answer, inserts still land, and the replica has them once it is back.

Runs only when the stack's profile is the cluster (STACK_ENV with CLICKHOUSE_SHARDS x
CLICKHOUSE_REPLICAS > 1, e.g. stack/multi.env); on the single-node stack every test is skipped."""

import json
import os

import pytest
from conftest import CH_DIR, URL, insert_rows, load_fixtures, server, sink_rows

from cpi2.clickhouse import cluster, forensics, schema
from cpi2.testing import chcluster

pytestmark = pytest.mark.skipif(
    not chcluster.is_cluster(),
    reason="the stack's profile runs one ClickHouse server (CLICKHOUSE_SHARDS x CLICKHOUSE_REPLICAS = 1 in "
    "$STACK_ENV); the cluster's tests need the multi-node profile (STACK_ENV=stack/multi.env make up)",
)

PARAMS = json.loads((CH_DIR / "tests" / "queries_params.json").read_text())
# The node killed: the first replica of the last shard, the one its shard's reads and writes go
# to while it answers (load_balancing in_order), never node 0 (the address clients know).
VICTIM = chcluster.NODES - chcluster.REPLICAS if chcluster.SHARDS > 1 else 1


@pytest.fixture(scope="module")
def ch():
    c = server()
    assert cluster.discover(c) is not None, f"{URL} is not a node of the cluster {cluster.NAME} ($STACK_ENV says it is)"
    return c


@pytest.fixture(scope="module")
def loaded(ch):
    """A database with the fixture dataset inserted twice (a replay), through node 0."""
    db = f"cpi2_test_{os.getpid()}_cluster"
    schema.drop_database(ch, db)
    schema.apply(ch, db, log=lambda *_: None)
    load_fixtures(ch, db)
    load_fixtures(ch, db)
    yield ch, db
    schema.drop_database(ch, db)


def mismatched_queries(ch, db):
    """The forensics queries whose answer on ch differs from their .reference."""
    return [
        name
        for name in forensics.names()
        if ch.query(forensics.render(name, PARAMS[name], db), "TabSeparatedWithNames")
        != (CH_DIR / "queries" / f"{name}.reference").read_text()
    ]


def test_every_node_answers_every_query_as_one_server(loaded):
    _, db = loaded
    for i in range(chcluster.NODES):
        assert mismatched_queries(chcluster.client(i), db) == [], chcluster.name(i)


def test_a_record_written_twice_is_on_one_shard_and_read_once(loaded):
    ch, db = loaded
    first = json.loads(sink_rows("samples")[0])
    where = f"host = '{first['host']}' AND task = '{first['task']}' AND window_start_us = {first['window_start_us']}"
    per_node = [chcluster.local_count(i, db, "samples_local", where) for i in range(chcluster.NODES)]
    holders = [i for i, n in enumerate(per_node) if n]
    # both copies on each replica of one shard (replicated blocks are kept as on one server)
    assert holders == chcluster.replicas_of(holders[0]) and {per_node[i] for i in holders} == {2}, per_node
    assert ch.query(f"SELECT count() FROM {db}.samples FINAL WHERE {where}").strip() == "1"
    # the small tables are on every node, whole
    actions = len(sink_rows("actions"))
    for i in range(chcluster.NODES):
        assert chcluster.local_count(i, db, "actions") == 2 * actions, chcluster.name(i)


def test_replica_down_queries_answer_and_it_catches_up(loaded):
    ch, db = loaded
    down = db + "_down"
    schema.drop_database(ch, down)
    schema.apply(ch, down, log=lambda *_: None)  # DDL needs every node: before the kill
    samples = [line.replace('"host":"h1"', '"host":"hdown"') for line in sink_rows("samples")]
    actions = [line.replace('"host":"h1"', '"host":"hdown"') for line in sink_rows("actions")]
    n_samples = sum('"host":"hdown"' in line for line in samples)
    n_actions = sum('"host":"hdown"' in line for line in actions)
    assert n_samples and n_actions
    try:
        chcluster.kill(VICTIM)
        assert chcluster.local_count(VICTIM, db, "samples_local") is None
        assert mismatched_queries(ch, db) == []
        # written while the replica is down, twice (a replay): every row acknowledged lands
        for _ in range(2):
            insert_rows(ch, down, "samples", samples)
            insert_rows(ch, down, "actions", actions)
        assert ch.query(f"SELECT count() FROM {down}.samples FINAL WHERE host = 'hdown'").strip() == str(n_samples)
        assert ch.query(f"SELECT count() FROM {down}.actions FINAL WHERE host = 'hdown'").strip() == str(n_actions)
    finally:
        chcluster.restart()
    # back: the replica fetches what its shard took while it was down
    on_shard = chcluster.wait_caught_up(VICTIM, down, "samples_local", "host = 'hdown'")
    assert on_shard > 0, "no sample of hdown hashed to the victim's shard: the catch-up was not tested"
    assert chcluster.wait_caught_up(VICTIM, down, "actions", "host = 'hdown'") == 2 * n_actions
    victim = chcluster.client(VICTIM)
    assert victim.query(f"SELECT count() FROM {down}.samples FINAL WHERE host = 'hdown'").strip() == str(n_samples)
    assert mismatched_queries(victim, db) == []
    schema.drop_database(ch, down)
