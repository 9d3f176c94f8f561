"""The ClickHouse nodes of the running stack's profile, for failure tests (issue 25): which there
are, kill -9 one, start it again, wait until it has caught up with its shard.

Node i (0-based) is the server named clickhouse (i = 0) or clickhouse-i, shard i // REPLICAS,
replica i % REPLICAS, at CLICKHOUSE_HTTP_PORT + i (stack/clickhouse-cluster.sh). Use with the
stack's STACK_ENV and STACK_DIR in the environment, as every make target of the stack."""

import os
import subprocess

from cpi2 import repo
from cpi2.clickhouse.chclient import ClickHouseError, HttpClickHouse
from cpi2.testing import stack

SHARDS = int(stack.E.get("CLICKHOUSE_SHARDS", "1"))
REPLICAS = int(stack.E.get("CLICKHOUSE_REPLICAS", "1"))
NODES = SHARDS * REPLICAS


def is_cluster():
    """Is the stack's profile a ClickHouse cluster (more than one node)?"""
    return NODES > 1


def name(i):
    """The server name of node i (pid file, log, make status)."""
    return "clickhouse" if i == 0 else f"clickhouse-{i}"


def client(i, timeout=30.0):
    """An HTTP client of node i alone (not through a Distributed table)."""
    return HttpClickHouse(repo.clickhouse_urls(stack.E).split(",")[i], timeout)


def replicas_of(i):
    """The nodes of node i's shard, node i included."""
    first = (i // REPLICAS) * REPLICAS
    return list(range(first, first + REPLICAS))


def kill(i):
    """kill -9 node i (as a crash would) and wait until its process is gone."""
    stack.kill_server(name(i))


def restart():
    """Starts again every server of the stack that is not running (stack/up.sh leaves the others
    alone) and waits until all of them answer; raises AssertionError with up.sh's output if not."""
    r = subprocess.run(
        [os.path.join(stack.ROOT, "stack", "up.sh")], capture_output=True, text=True, timeout=600, env=os.environ
    )
    assert r.returncode == 0, "stack/up.sh failed:\n" + r.stdout + r.stderr


def local_count(i, db, table, where="1"):
    """Rows of db.table's replica on node i itself (a sharded table's T_local), or None while
    node i does not answer."""
    try:
        return int(client(i).query(f"SELECT count() FROM {db}.{table} WHERE {where}").strip())
    except ClickHouseError:
        return None


def wait_caught_up(i, db, table, where="1", timeout=120):
    """Waits until node i's replica of db.table has as many rows matching where as every other
    replica of its shard (replication after a restart); returns that count."""

    def same():
        counts = [local_count(n, db, table, where) for n in replicas_of(i)]
        return (counts[0],) if None not in counts and len(set(counts)) == 1 else None

    return stack.wait_until(same, timeout, f"{name(i)}'s {db}.{table} to catch up")[0]
