"""cpi2ctl: the CPI2 operator CLI. Who hurt my job, when, and did capping help; what is capped now
and is protection on; act on the enforcers by hand. Words in capitals are yours: a job, a host, a
task (a cgroup, or namespace/pod on Kubernetes), an incident id from `cpi2ctl incidents`.

  cpi2ctl incidents --from now-1d                                   recent incidents, newest first
  cpi2ctl incidents --job JOB --decision THROTTLE --from now-6h
  cpi2ctl caps                                                      caps in force now (--at TIME: then)
  cpi2ctl protection status                                         kill switches: cluster, hosts off
  cpi2ctl query top-antagonists --job JOB --from now-1d             forensics (clickhouse/queries)
  cpi2ctl incident show INCIDENT_ID --png incident.png              victim vs antagonist, caps shaded
  cpi2ctl cap TASK --host HOST --cpu 0.1 --duration 300             cap by hand
  cpi2ctl uncap TASK --host HOST
  cpi2ctl protection off --host HOST                                or --cluster (asks, or --yes)
  cpi2ctl config get-contexts                                       where cpi2ctl connects (contexts)

Every command prints -o table (default), json or yaml. Times: now, now-2h, now-1d, now/d,
ISO 8601 (UTC unless an offset is given) or microseconds. Connection options (--context,
--clickhouse, --kafka, ...) go before or after the command.
Exit status: 0 done, 1 a server failed or refused, 2 bad arguments (bad time range, unknown id...)."""

import argparse
import os
import subprocess
import sys

from cpi2 import repo
from cpi2.cli import advise, config, control, incident, queries, timerange
from cpi2.clickhouse import chclient, forensics


def version():
    """The package's version and the commit of the checkout it runs from, when it is one."""
    try:
        from importlib.metadata import version as pkg_version

        v = pkg_version("cpi2")
    except Exception:  # not installed: running from the source tree (cli/bin/cpi2ctl)
        v = "0.1.0"
    try:
        rev = subprocess.run(
            ["git", "-C", str(repo.ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        rev = ""
    return f"cpi2ctl {v}" + (f" (commit {rev})" if rev else "")


def connection_options(p, default):
    """The options that say where cpi2ctl connects: on the main parser (default None) and on
    every command (default argparse.SUPPRESS: given after the command, they win)."""
    g = p.add_argument_group("connection (flag, else environment, else context, else the local stack)")
    opt = lambda *a, **k: g.add_argument(*a, default=default, **k)  # noqa: E731
    opt("--context", metavar="NAME", help="context of the config file (env CPI2_CONTEXT; default its current-context)")
    opt("--config", metavar="FILE", help="config file (env CPI2_CONFIG; default ~/.config/cpi2/config.yaml)")
    opt("--clickhouse", metavar="URL", help="ClickHouse HTTP(S) URL (env CPI2_CLICKHOUSE_URL)")
    opt("--database", help="ClickHouse database (env CPI2_DATABASE; default cpi2)")
    opt(
        "--clickhouse-user",
        metavar="USER",
        help="ClickHouse user (env CPI2_CLICKHOUSE_USER; default the server's default)",
    )
    opt(
        "--clickhouse-password-file",
        metavar="FILE",
        help="file holding the ClickHouse password, mode 0600 (env CPI2_CLICKHOUSE_PASSWORD_FILE, or the password"
        " itself in CPI2_CLICKHOUSE_PASSWORD)",
    )
    opt("--clickhouse-ca", metavar="FILE", help="CA certificates that check an https server (env CPI2_CLICKHOUSE_CA)")
    opt("--clickhouse-cert", metavar="FILE", help="client certificate for https (env CPI2_CLICKHOUSE_CERT)")
    opt("--clickhouse-key", metavar="FILE", help="its private key (env CPI2_CLICKHOUSE_KEY)")
    opt("--kafka", metavar="HOST:PORT", help="Kafka bootstrap servers (env CPI2_KAFKA_BOOTSTRAP)")
    opt(
        "--kafka-client-file",
        metavar="PATH",
        help="Kafka client file of the principal (librdkafka properties: SASL, TLS, password; mode 0600;"
        " env CPI2_KAFKA_CLIENT_FILE; default the local stack's operator file)",
    )


def parser():
    p = argparse.ArgumentParser(
        prog="cpi2ctl", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--version", action="version", version=version())
    connection_options(p, None)
    common = argparse.ArgumentParser(add_help=False)
    connection_options(common, argparse.SUPPRESS)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    queries.add_parsers(sub, [common])
    incident.add_parsers(sub, [common])
    control.add_parsers(sub, [common])
    advise.add_parsers(sub, [common])
    config.add_parsers(sub, [common])
    return p


def main(argv=None, out=None, err=None):
    out, err = out or sys.stdout, err or sys.stderr
    args = parser().parse_args(argv)
    try:
        if not getattr(args, "no_settings", False):
            args.settings = config.resolve(args)
            args.database = args.settings.database
        return args.func(args, out)
    except (timerange.TimeError, forensics.ParamError, control.ControlError) as e:
        print(f"cpi2ctl: {e}", file=err)
        return 1 if isinstance(e, control.DeliveryError) else 2
    except (incident.IncidentError, config.ConfigError) as e:
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
