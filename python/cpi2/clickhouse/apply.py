#!/usr/bin/env python3
"""Applies the CPI2 ClickHouse schema (clickhouse/migrations) to a server; re-running is a no-op.
Run as python -m cpi2.clickhouse.apply (standard library only).

  apply.py [--url http://127.0.0.1:8123] [--database cpi2]
  apply.py --kafka-brokers 127.0.0.1:9092   also feed host_metrics from Telegraf's topic
  apply.py --retention     drop day partitions past retention (servers without TTL, e.g. 18.16)
  --url chdb:/some/dir applies to chdb-core in-process instead of a server."""

import argparse
import sys

from cpi2 import names
from cpi2.clickhouse import schema
from cpi2.clickhouse.chclient import ClickHouseError, connect


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--url", default="http://127.0.0.1:8123", help="ClickHouse HTTP URL or chdb:DIR (default %(default)s)"
    )
    p.add_argument("--database", default="cpi2", help="target database (default %(default)s)")
    p.add_argument("--user", help="ClickHouse user (default: the server's default user)")
    p.add_argument("--password-file", help="a file whose first line is the user's password")
    p.add_argument("--ca-file", help="for https URLs: the CA file of the server's certificate")
    p.add_argument("--kafka-brokers", help="also create the Kafka engine table feeding host_metrics from these brokers")
    p.add_argument("--kafka-topic", default=names.HOST_METRICS, help="Telegraf's topic (default %(default)s)")
    p.add_argument("--kafka-group", default="cpi2-clickhouse-host-metrics", help="consumer group (default %(default)s)")
    p.add_argument("--retention", action="store_true", help="drop partitions older than each table's retention instead")
    p.add_argument("--today", help="YYYY-MM-DD used as today by --retention (default: the server's today())")
    a = p.parse_args(argv)
    sign_in = {"user": a.user, "ca_file": a.ca_file}
    if a.password_file:
        try:
            with open(a.password_file, encoding="utf-8") as f:
                sign_in["password"] = f.readline().rstrip("\n")
        except OSError as e:
            print(f"apply.py: cannot read the password file: {e}", file=sys.stderr)
            return 2
    ch = connect(a.url, **{k: v for k, v in sign_in.items() if v})
    try:
        if a.retention:
            schema.retention(ch, a.database, a.today)
        else:
            schema.apply(ch, a.database)
            if a.kafka_brokers:
                schema.apply_kafka(ch, a.database, a.kafka_brokers, a.kafka_topic, a.kafka_group)
    except (ClickHouseError, ValueError) as e:
        print(f"apply.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
