"""cpi2ctl: the CPI2 operator CLI.

  cpi2ctl query top-antagonists --job websearch --from -1d        forensics (clickhouse/queries)
  cpi2ctl incident show h1-websearch/0-1 -o inc.png               victim CPI vs antagonist, caps shaded
  cpi2ctl cap cpi2.slice/batch-7 --host h1 --cpu 0.1 --duration 300
  cpi2ctl uncap cpi2.slice/batch-7 --host h1
  cpi2ctl protection off --host h1 | --cluster

Exit status: 0 done, 1 a server failed or refused, 2 bad arguments (bad time range, unknown id...)."""

import argparse
import os
import sys

from cpi2 import repo
from cpi2.cli import advise, control, incident, queries, timerange
from cpi2.clickhouse import chclient, forensics


def parser():
    p = argparse.ArgumentParser(
        prog="cpi2ctl", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--clickhouse",
        default=repo.default_clickhouse_url(),
        metavar="URL",
        help="ClickHouse HTTP URL (default %(default)s; env CPI2_CLICKHOUSE_URL)",
    )
    p.add_argument(
        "--database",
        default=os.environ.get("CPI2_DATABASE", "cpi2"),
        help="ClickHouse database (default %(default)s; env CPI2_DATABASE)",
    )
    p.add_argument(
        "--kafka",
        default=repo.default_kafka_bootstrap(),
        metavar="HOST:PORT",
        help="Kafka bootstrap servers (default %(default)s; env CPI2_KAFKA_BOOTSTRAP)",
    )
    p.add_argument(
        "--kafka-client-file",
        default=repo.default_kafka_client_file(),
        metavar="PATH",
        help="Kafka client file of the principal (librdkafka properties: SASL, TLS, password; mode 0600;"
        " default: env CPI2_KAFKA_CLIENT_FILE, else the local stack's operator file if any: %(default)s)",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    queries.add_parsers(sub)
    incident.add_parsers(sub)
    control.add_parsers(sub)
    advise.add_parsers(sub)
    return p


def main(argv=None, out=None, err=None):
    out, err = out or sys.stdout, err or sys.stderr
    args = parser().parse_args(argv)
    try:
        return args.func(args, out)
    except (timerange.TimeError, forensics.ParamError, control.ControlError) as e:
        print(f"cpi2ctl: {e}", file=err)
        return 1 if isinstance(e, control.DeliveryError) else 2
    except incident.IncidentError as e:
        print(f"cpi2ctl: {e}", file=err)
        return 2
    except chclient.ClickHouseError as e:
        print(f"cpi2ctl: {e}", file=err)
        return 1


def entry():
    try:
        sys.exit(main())
    except BrokenPipeError:  # output piped into head & co.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
