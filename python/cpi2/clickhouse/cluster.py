"""ClickHouse as a cluster: the migrations of clickhouse/migrations applied to every node of the
cluster `cpi2` (remote_servers), shards of replicas, as on one server but with

  - each per-sample *MergeTree table T (SHARDED: the samples, their rollups, the host metrics)
    made on every node as T_local, Replicated*MergeTree with the ZooKeeper path
    /clickhouse/tables/{shard}/<db>/T_local and replica {replica} (the node's macros), and T
    itself a Distributed table over the T_local of every shard, sharded by cityHash64 of the
    ORDER BY columns of T's CREATE (the record's identity): a record written twice lands on the
    same shard, where ReplacingMergeTree and FINAL fold it as on one server. T's MATERIALIZED
    columns are ALIAS columns of the Distributed table (18.16 refuses a Distributed insert of
    MATERIALIZED columns); the replicated table computes them on insert.
  - every other *MergeTree table (specs, incidents, suspects, actions, outcomes, dead letters: a
    few rows per incident) made on every node under its own name as a Replicated*MergeTree with
    one ZooKeeper path for all nodes (/clickhouse/tables/all/<db>/T): each node holds all of its
    rows, so a query reads it, and joins it with a subquery, on the node it came to. (18.16 also
    fails on the scalar subquery of victim_vs_antagonist's caps over a Distributed table.)
  - a materialized view of a sharded table made on every node between the local tables (it sees
    the rows its node receives; its target replicates them). A view of any other table (the
    Null table host_metrics_raw, the Kafka engine table) writes to its target's own name.
  - an ALTER of a replicated table run on one replica of each shard (ZooKeeper carries it to the
    others), after which the Distributed table is made again from the local table's columns.
  - an INSERT ... SELECT run once, on the first node.
  - any other statement (CREATE DATABASE, Null and Kafka tables) run on every node.

A server is a node of such a cluster when its system.clusters has the cluster `cpi2` with more
than one replica in all. The other nodes' HTTP addresses follow the local stack's convention
(node i at the first node's HTTP port + i, where i orders the cluster's TCP ports), unless
CLICKHOUSE_CLUSTER_URLS lists them (comma separated, in shard then replica order)."""

import json
import os
import re
import time
import urllib.parse

from cpi2.clickhouse.chclient import ClickHouseError, HttpClickHouse

NAME = "cpi2"
LOCAL = "_local"
# The tables sharded by record (their rows grow with the fleet's samples); the others are on every node.
SHARDED = ("samples", "samples_1m", "samples_host_days", "host_metrics")

_CREATE = re.compile(
    r"^CREATE TABLE IF NOT EXISTS (\w+)\.(\w+) \((.*)\) ENGINE = (\w*)MergeTree(?:\((.*?)\))?(\s.*)$", re.S
)
_ORDER_BY = re.compile(r"\bORDER BY (\((.*?)\)|\w+)")
_VIEW = re.compile(r"^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+)\.(\w+) TO (\w+)\.(\w+) AS\b(.*)$", re.S)
_ALTER = re.compile(r"^ALTER TABLE (\w+)\.(\w+)\b(.*)$", re.S)
_INSERT_SELECT = re.compile(r"^INSERT INTO \w+\.\w+\s.*\bSELECT\b", re.S)


class Cluster:
    """The nodes of the cluster: [(shard, replica, client)] in shard then replica order."""

    def __init__(self, nodes, name=NAME):
        self.nodes = nodes
        self.name = name

    @property
    def clients(self):
        return [c for _, _, c in self.nodes]

    def shards(self):
        """{shard: [client, ...]} in replica order."""
        out = {}
        for shard, _, c in self.nodes:
            out.setdefault(shard, []).append(c)
        return out

    def one_per_shard(self):
        """The first answering replica of each shard (raises when a whole shard is down)."""
        out = []
        for shard, clients in sorted(self.shards().items()):
            live = [c for c in clients if c.answers()]
            if not live:
                raise ClickHouseError(f"cluster {self.name}: no replica of shard {shard} answers")
            out.append(live[0])
        return out


_found = {}


def discover(ch, name=NAME):
    """The Cluster ch is node 0 of, or None for a single server (and for chdb)."""
    if not isinstance(ch, HttpClickHouse):
        return None
    if ch.url in _found:
        return _found[ch.url]
    try:
        rows = ch.query(f"SELECT shard_num, replica_num, port FROM system.clusters WHERE cluster = '{name}'")
    except ClickHouseError:
        rows = ""
    rows = [tuple(int(x) for x in line.split("\t")) for line in rows.splitlines() if line]
    cluster = None
    if len(rows) > 1:
        cluster = Cluster(_node_clients(ch, sorted(rows)), name)
    _found[ch.url] = cluster
    return cluster


def _node_clients(ch, rows):
    urls = [u.strip() for u in os.environ.get("CLICKHOUSE_CLUSTER_URLS", "").split(",") if u.strip()]
    if urls and len(urls) != len(rows):
        raise ClickHouseError(f"CLICKHOUSE_CLUSTER_URLS lists {len(urls)} nodes, the cluster has {len(rows)}")
    if not urls:
        u = urllib.parse.urlsplit(ch.url)
        first = min(port for _, _, port in rows)
        urls = [
            urllib.parse.urlunsplit((u.scheme, f"{u.hostname}:{u.port + port - first}", "", "", ""))
            for _, _, port in rows
        ]
    nodes = []
    for (shard, replica, _), url in zip(rows, urls):
        c = ch if url.rstrip("/") == ch.url else HttpClickHouse(url, ch.timeout)
        nodes.append((shard, replica, c))
    return nodes


def replicated_tables(statements):
    """{table: sharding key, or None for a table on every node} of every *MergeTree table
    CREATEd in these (rendered) statements."""
    keys = {}
    for stmt in statements:
        m = _CREATE.match(stmt)
        if m and m.group(2) not in SHARDED:
            keys[m.group(2)] = None
        elif m:
            order = _ORDER_BY.search(m.group(6))
            cols = order.group(2) if order and order.group(2) is not None else (order.group(1) if order else "")
            keys[m.group(2)] = f"cityHash64({cols})" if cols and cols != "tuple()" else "rand()"
    return keys


def run(cluster, stmt, keys):
    """Runs one rendered migration statement on the cluster (see the module's docstring).
    keys: replicated_tables() of every migration. Returns the tables whose columns changed."""
    m = _CREATE.match(stmt)
    if m:
        db, table, cols, kind, args, rest = m.groups()
        local, path = (table + LOCAL, "{shard}") if keys.get(table) else (table, "all")
        zk = f"'/clickhouse/tables/{path}/{db}/{local}', '{{replica}}'" + (f", {args}" if args else "")
        ddl = f"CREATE TABLE IF NOT EXISTS {db}.{local} ({cols}) ENGINE = Replicated{kind}MergeTree({zk}){rest}"
        for c in cluster.clients:
            c.query(ddl)
        return [table]
    m = _VIEW.match(stmt)
    if m:
        db, view, tdb, target, select = m.groups()
        source = re.search(r"\bFROM (\w+)\.(\w+)", select)
        if source and keys.get(source.group(2)):
            select = select[: source.end()] + LOCAL + select[source.end() :]
            stmt = f"CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.{view} TO {tdb}.{target}{LOCAL} AS{select}"
        for c in cluster.clients:
            c.query(stmt)
        return []
    m = _ALTER.match(stmt)
    if m and m.group(2) in keys:
        db, table, rest = m.groups()
        sharded = keys[table] is not None
        for c in cluster.one_per_shard() if sharded else cluster.one_per_shard()[:1]:
            c.query(f"ALTER TABLE {db}.{table}{LOCAL if sharded else ''}{rest}")
        return [table]
    if _INSERT_SELECT.match(stmt):
        cluster.clients[0].query(stmt)
        return []
    for c in cluster.clients:
        c.query(stmt)
    return []


def _columns(ch, db, table):
    rows = ch.query(
        f"SELECT name, type, default_kind, default_expression FROM system.columns"
        f" WHERE database = '{db}' AND table = '{table}'",
        fmt="JSONCompact",
    )
    return [tuple(r) for r in json.loads(rows)["data"]]


def distributed_columns(local_columns):
    """The column list of the Distributed table over a local table with these columns."""
    out = []
    for name, typ, kind, expr in local_columns:
        col = f"{name} {typ}"
        if kind == "MATERIALIZED" or kind == "ALIAS":
            col += f" ALIAS {expr}"
        elif kind == "DEFAULT":
            col += f" DEFAULT {expr}"
        out.append(col)
    return out


def sync(cluster, db, table, key, timeout=60):
    """Waits until every node's replica of db.table has the columns of the first (ZooKeeper
    applies an ALTER to the other replicas after it returns); for a sharded table (key), then makes
    db.table on every node the Distributed table over db.table_local with those columns, unless
    it already is."""
    local = table + LOCAL if key else table
    want = _columns(cluster.one_per_shard()[0], db, local)
    deadline = time.time() + timeout
    for c in cluster.clients:
        while _columns(c, db, local) != want:
            if time.time() > deadline:
                raise ClickHouseError(f"{c.url}: {db}.{local} did not get the columns of its replicas in {timeout}s")
            time.sleep(0.2)
    if not key:
        return
    cols = ",\n    ".join(distributed_columns(want))
    ddl = (
        f"CREATE TABLE {db}.{table} (\n    {cols}\n) ENGINE = Distributed({cluster.name}, {db}, {table}{LOCAL}, {key})"
    )
    expect = distributed_columns(want)
    for c in cluster.clients:
        have = _columns(c, db, table)
        if have and distributed_columns(have) == expect:
            continue
        c.query(f"DROP TABLE IF EXISTS {db}.{table}")
        c.query(ddl)


def drop_database(cluster, db):
    """DROP DATABASE on every node (the replicated tables leave ZooKeeper with it)."""
    for c in cluster.clients:
        c.query(f"DROP DATABASE IF EXISTS {db}")
