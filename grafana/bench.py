#!/usr/bin/env python3
"""Times every dashboard panel's SQL (macros expanded, variables at their first value, the last --hours,
interval for ~1000 points)
against a ClickHouse database, best of 3. Prints the figures; nothing is asserted."""
import argparse
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "tests"), os.path.join(HERE, "..", "cli")]

from cpi2ctl import repo, stacktest  # noqa: E402

import generate  # noqa: E402
from grafana_sql import expand  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", default=repo.default_clickhouse_url())
    p.add_argument("--database", default="cpi2")
    p.add_argument("--hours", type=float, default=6)
    a = p.parse_args()
    ch = stacktest.clickhouse(a.url)
    to_s = int(time.time())
    from_s = to_s - int(a.hours * 3600)
    interval = max(1, (to_s - from_s) // 1000)
    n = ch.query(f"SELECT count() FROM {a.database}.samples").strip()
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs; {a.url} database {a.database} ({n} samples); "
          f"range {a.hours} h, interval {interval} s; best of 3")
    for d in generate.DASHBOARDS:
        values = {}
        for v in d.variables:  # each variable's first value in this database, as Grafana would pick
            rows = ch.query(expand(v.sql, values, from_s, to_s, interval).replace("cpi2.", f"{a.database}.")).split("\n")
            values[v.name] = rows[0] if rows[0] else v.test_value
        if values:
            print(f"  {d.uid}: " + ", ".join(f"{k}={v}" for k, v in values.items()))
        for pnl in d.panels:
            for t in pnl.targets:
                sql = expand(t.sql, values, from_s, to_s, interval).replace("cpi2.", f"{a.database}.")
                best = min(_timed(ch, sql) for _ in range(3))
                print(f"  {best * 1000:8.1f} ms  {d.uid}: {pnl.title}")


def _timed(ch, sql):
    t0 = time.perf_counter()
    ch.query(sql)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
