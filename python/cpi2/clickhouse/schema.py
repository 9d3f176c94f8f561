"""Applies clickhouse/migrations/NNN_name.sql to a server, filling the template markers with what
that server supports, and records each applied version in <db>.schema_migrations.

Markers (one schema source for ClickHouse 18.16 and current versions):
  {{DB}}                 the target database
  {{LC(T)}}              LowCardinality(T) where the server has it by default, else T
  {{CODEC(c, ...)}}      CODEC(c, ...) where codecs exist (19.x+), else nothing
  {{TTL(expr)}}          TTL expr where table TTL exists (19.6+), else nothing: retention()
                         then drops whole day partitions older than the same interval.
Support is probed by creating a throw-away table in the target database, not guessed from the
version string.

On a node of the ClickHouse cluster `cpi2` the same migrations make replicated tables under local
names and Distributed tables under the names clients use, on every node (cpi2.clickhouse.cluster)."""

import hashlib
import re

from cpi2 import names, repo
from cpi2.clickhouse import cluster as chcluster
from cpi2.clickhouse.chclient import ClickHouseError

MIGRATIONS = repo.CLICKHOUSE_DIR / "migrations"
_MARKER = re.compile(r"\{\{(LC|CODEC|TTL)\((.*?)\)\}\}")
_TTL_DAYS = re.compile(r"\{\{TTL\(\w+\(?\w*\)? \+ INTERVAL (\d+) DAY\)\}\}")
_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_PROBES = {
    "LC": "CREATE TABLE {t} (s LowCardinality(String)) ENGINE = MergeTree ORDER BY tuple()",
    "CODEC": "CREATE TABLE {t} (x Int64 CODEC(Delta, ZSTD)) ENGINE = MergeTree ORDER BY x",
    "TTL": "CREATE TABLE {t} (d Date) ENGINE = MergeTree PARTITION BY d ORDER BY d TTL d + INTERVAL 1 DAY",
}


def migrations(directory=MIGRATIONS):
    """[(version, name, text)] sorted by version; refuses badly named or duplicate files."""
    found = {}
    for p in sorted(directory.glob("*.sql")):
        m = _NAME.match(p.name)
        if not m:
            raise ValueError(f"{p}: migration files are named NNN_name.sql")
        v = int(m.group(1))
        if v in found:
            raise ValueError(f"{p}: version {v} appears twice")
        found[v] = (v, m.group(2), p.read_text())
    return [found[v] for v in sorted(found)]


def probe(ch, db):
    """{'LC': bool, 'CODEC': bool, 'TTL': bool} for this server."""
    features = {}
    for feature, ddl in _PROBES.items():
        table = f"{db}._cpi2_probe_{feature.lower()}"
        ch.query(f"DROP TABLE IF EXISTS {table}")
        try:
            ch.query(ddl.format(t=table))
            features[feature] = True
        except ClickHouseError:
            features[feature] = False
        ch.query(f"DROP TABLE IF EXISTS {table}")
    return features


def render(text, db, features):
    """The migration text with every marker filled for a server with these features."""

    def fill(m):
        kind, arg = m.group(1), m.group(2)
        if kind == "LC":
            return f"LowCardinality({arg})" if features["LC"] else arg
        if kind == "CODEC":
            return f"CODEC({arg})" if features["CODEC"] else ""
        return f"TTL {arg}" if features["TTL"] else ""

    return _MARKER.sub(fill, text).replace("{{DB}}", db)


def statements(text):
    """The statements of a migration: comment lines dropped, split at ';' ending a line."""
    body = "\n".join(line for line in text.splitlines() if not line.strip().startswith("--"))
    return [s.strip() for s in re.split(r";\s*(?:\n|$)", body) if s.strip()]


def checksum(text):
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def applied(ch, db):
    """{version: checksum} already recorded in db.schema_migrations."""
    rows = ch.query(f"SELECT version, checksum FROM {db}.schema_migrations FINAL ORDER BY version")
    return {int(v): c for v, c in (line.split("\t") for line in rows.splitlines() if line)}


def _runner(ch, db, features=None):
    """run(statement) on ch, or on the cluster ch is node 0 of (see cpi2.clickhouse.cluster)."""
    cl = chcluster.discover(ch)
    if cl is None:
        return ch.query
    features = features or probe(ch, db)
    keys = {}
    for _, _, text in migrations():
        keys.update(chcluster.replicated_tables(statements(render(text, db, features))))

    def run(stmt):
        for table in chcluster.run(cl, stmt, keys):
            chcluster.sync(cl, db, table, keys[table])

    return run


def drop_database(ch, db):
    """DROP DATABASE IF EXISTS db, on every node when ch is a node of the cluster."""
    if not _IDENT.match(db):
        raise ValueError(f"database name {db!r} is not a plain identifier")
    cl = chcluster.discover(ch)
    if cl is None:
        ch.query(f"DROP DATABASE IF EXISTS {db}")
    else:
        chcluster.drop_database(cl, db)


def apply(ch, db="cpi2", log=print):
    """Applies every migration not yet recorded; returns the versions applied (empty: no-op)."""
    if not _IDENT.match(db):
        raise ValueError(f"database name {db!r} is not a plain identifier")
    cl = chcluster.discover(ch)
    nodes = cl.clients if cl else [ch]
    for node in nodes:
        node.query(f"CREATE DATABASE IF NOT EXISTS {db}")
        node.query(
            f"CREATE TABLE IF NOT EXISTS {db}.schema_migrations (version UInt32, name String, checksum String,"
            " features String, applied_at DateTime) ENGINE = ReplacingMergeTree ORDER BY version"
        )
    done = applied(ch, db)
    todo = []
    for version, name, text in migrations():
        if version in done:
            if done[version] != checksum(text):
                raise ValueError(
                    f"migration {version:03d}_{name}.sql changed after it was applied; add a new migration instead"
                )
            continue
        todo.append((version, name, text))
    if not todo:
        log(f"{db}: schema up to date (version {max(done) if done else 0}) on {ch.url}")
        return []
    features = probe(ch, db)
    enabled = ",".join(k for k, on in features.items() if on) or "none"
    run = _runner(ch, db, features)
    for version, name, text in todo:
        for stmt in statements(render(text, db, features)):
            run(stmt)
        for node in nodes:
            node.query(
                f"INSERT INTO {db}.schema_migrations (version, name, checksum, features, applied_at) VALUES"
                f" ({version}, '{name}', '{checksum(text)}', '{enabled}', now())"
            )
        log(f"{db}: applied {version:03d}_{name} on {ch.url} (features: {enabled})")
    return [v for v, _, _ in todo]


KAFKA_SQL = repo.CLICKHOUSE_DIR / "kafka" / "host_metrics_kafka.sql"
_KAFKA_VALUE = re.compile(r"^[A-Za-z0-9_.:,\-]+$")


def apply_kafka(ch, db, brokers, topic=names.HOST_METRICS, group="cpi2-clickhouse-host-metrics", log=print):
    """Creates the Kafka engine table feeding host_metrics (idempotent; needs the migrations)."""
    for what, value in (("brokers", brokers), ("topic", topic), ("group", group)):
        if not _KAFKA_VALUE.match(value):
            raise ValueError(f"Kafka {what} {value!r} has characters other than letters, digits and _.:,-")
    text = KAFKA_SQL.read_text().replace("{{KAFKA_BROKERS}}", brokers).replace("{{KAFKA_TOPIC}}", topic)
    text = re.sub(
        r"\{\{PARSE_FROM\((\w+)\)\}\}",
        lambda m: host_metrics_parse().replace("{{DB}}.host_metrics_raw", "{{DB}}." + m.group(1)),
        text,
    )
    run = _runner(ch, db)
    for stmt in statements(text.replace("{{KAFKA_GROUP}}", group).replace("{{DB}}", db)):
        run(stmt)
    log(f"{db}: host_metrics fed from Kafka {brokers} topic {topic} (group {group})")


def host_metrics_parse():
    """The SELECT of host_metrics_mv (migration 003): the one parser of Telegraf's JSON lines."""
    for _, _, text in migrations():
        for stmt in statements(text):
            if stmt.startswith("CREATE MATERIALIZED VIEW IF NOT EXISTS {{DB}}.host_metrics_mv "):
                return stmt.split(" AS\n", 1)[1]
    raise ValueError("no host_metrics_mv in the migrations")


def retention_days():
    """{table: days} from the TTL markers of the migrations (the one place retention is set)."""
    days = {}
    for _, _, text in migrations():
        for stmt in statements(text):
            m = _TTL_DAYS.search(stmt)
            t = re.search(r"CREATE TABLE IF NOT EXISTS \{\{DB\}\}\.(\w+)", stmt)
            if m and t:
                days[t.group(1)] = int(m.group(1))
    return days


def retention(ch, db="cpi2", today=None, log=print):
    """On a server without TTL, drops the day partitions older than each table's retention.
    Returns [(table, partition_id)] dropped; nothing on a server with TTL (it expires rows itself)."""
    if probe(ch, db)["TTL"]:
        log(f"{db}: server has TTL, retention is done by the server")
        return []
    today_expr = f"toDate('{today}')" if today else "today()"
    cl = chcluster.discover(ch)
    dropped = []
    for table, days in sorted(retention_days().items()):
        # On the cluster: one replica of each shard (ZooKeeper drops the partition on the others).
        targets = [(ch, "")]
        if cl and table in chcluster.SHARDED:
            targets = [(node, chcluster.LOCAL) for node in cl.one_per_shard()]
        elif cl:
            targets = [(cl.one_per_shard()[0], "")]
        for node, suffix in targets:
            rows = node.query(
                f"SELECT DISTINCT partition_id FROM system.parts WHERE database = '{db}' AND table = '{table}{suffix}'"
                f" AND active AND max_date < {today_expr} - {days} ORDER BY partition_id"
            )
            for pid in rows.split():
                node.query(f"ALTER TABLE {db}.{table}{suffix} DROP PARTITION ID '{pid}'")
                dropped.append((table, pid))
                log(f"{db}.{table}: dropped partition {pid} (older than {days} days) on {node.url}")
    return dropped
