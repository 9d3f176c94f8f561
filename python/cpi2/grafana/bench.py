#!/usr/bin/env python3
"""Times every dashboard panel's SQL (macros expanded, variables at their first value, the last --hours,
interval for ~1000 points)
against a ClickHouse database, best of 3. Prints the figures; nothing is asserted. A database without
samples (a fresh stack has no cpi2) is not timed: --rows samples of clickhouse/bench.py's synthetic
fleet are generated into <database>_grafana_bench instead, which is dropped at the end."""

import argparse
import os
import platform
import time

from cpi2 import repo
from cpi2.clickhouse import bench as clickhouse_bench
from cpi2.clickhouse.chclient import ClickHouseError
from cpi2.grafana import generate
from cpi2.grafana.grafana_sql import expand
from cpi2.testing import fixtures


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", default=repo.default_clickhouse_url())
    p.add_argument("--database", default="cpi2")
    p.add_argument("--hours", type=float, default=6)
    p.add_argument(
        "--rows",
        type=int,
        default=10_000_000,
        help="samples to generate when --database has none (default %(default)s; 2 days, so 1/8 in 6 hours)",
    )
    a = p.parse_args()
    ch = fixtures.clickhouse(a.url)
    if _samples(ch, a.database):
        time_panels(ch, a.database, a)
        return
    generated = a.database + "_grafana_bench"
    print(
        f"no samples in {a.database} at {a.url}: timing over {a.rows:,} generated ones in {generated} (dropped after)",
        flush=True,
    )
    chbench = clickhouse_bench
    ch.timeout = max(ch.timeout, 600)
    try:
        ch.query(f"DROP DATABASE IF EXISTS {generated}")
        chbench.schema.apply(ch, generated, log=lambda *_: None)
        chbench.generate(ch, generated, a.rows, lambda m: print("  " + m, flush=True))
        time_panels(ch, generated, a)
    finally:
        ch.query(f"DROP DATABASE IF EXISTS {generated}")


def _samples(ch, database):
    """How many samples the database holds; 0 without the table."""
    try:
        return int(ch.query(f"SELECT count() FROM {database}.samples").strip())
    except ClickHouseError:
        return 0


def time_panels(ch, database, a):
    to_s = int(time.time())
    from_s = to_s - int(a.hours * 3600)
    interval = max(1, (to_s - from_s) // 1000)
    n = ch.query(f"SELECT count() FROM {database}.samples").strip()
    print(
        f"machine: {platform.node()}, {os.cpu_count()} CPUs; {a.url} database {database} ({n} samples); "
        f"range {a.hours} h, interval {interval} s; best of 3"
    )
    for d in generate.DASHBOARDS:
        values = {}
        for v in d.variables:  # each variable's first value in this database, as Grafana would pick
            rows = ch.query(expand(v.sql, values, from_s, to_s, interval).replace("cpi2.", f"{database}.")).split("\n")
            values[v.name] = rows[0] if rows[0] else v.test_value
        if values:
            print(f"  {d.uid}: " + ", ".join(f"{k}={v}" for k, v in values.items()))
        for pnl in d.panels:
            for t in pnl.targets:
                sql = expand(t.sql, values, from_s, to_s, interval).replace("cpi2.", f"{database}.")
                best = min(_timed(ch, sql) for _ in range(3))
                print(f"  {best * 1000:8.1f} ms  {d.uid}: {pnl.title}")


def _timed(ch, sql):
    t0 = time.perf_counter()
    ch.query(sql)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
