"""`cpi2ctl query NAME`: one subcommand per forensics query of clickhouse/queries/*.sql, with the
options generated from the query's own '-- param' declarations (forensics.params). Two of them are
also commands of their own: `cpi2ctl incidents` (query incidents) and `cpi2ctl caps` (query
caps-in-force)."""

import re

from cpi2.cli import output, tasks, timerange
from cpi2.clickhouse import forensics

# Time parameters: their flag and default (Grafana's relative times, timerange).
TIME_PARAMS = {"from_us": ("--from", "now-1d"), "to_us": ("--to", "now"), "at_us": ("--at", "now")}
# Commands that are a query under a name of their own: command -> (query, help)
SHORTCUTS = {
    "incidents": ("incidents", "recent incidents, newest first, with filters (query incidents)"),
    "caps": ("caps_in_force", "the caps in force now or at --at, from the enforcers' actions (query caps-in-force)"),
}


def cli_name(query):
    return query.replace("_", "-")


def add_parsers(sub, parents=()):
    """Adds `query` with its subcommands, and the shortcuts, to an argparse subparsers object."""
    q = sub.add_parser(
        "query",
        help="run a forensics query (clickhouse/queries/*.sql)",
        description="Run a named forensics query over the CPI2 tables. Times: now, now-2h, now-1d, "
        "now/d (today), ISO 8601 (UTC unless an offset is given) or microseconds since the epoch.",
    )
    qs = q.add_subparsers(dest="query", metavar="QUERY", required=True)
    for name in forensics.names():
        doc = _doc(name)
        add_query_parser(qs, cli_name(name), name, re.split(r"[:.] |\(", doc, maxsplit=1)[0].strip(), parents)
    for command, (name, help_text) in SHORTCUTS.items():
        add_query_parser(sub, command, name, help_text, parents)
    return q


def add_query_parser(sub, command, name, help_text, parents=()):
    """A subcommand `command` that runs forensics query `name`."""
    ps = forensics.params(name)
    p = sub.add_parser(command, help=help_text, description=_doc(name), parents=list(parents))
    for prm in ps:
        if prm.name in TIME_PARAMS:
            flag, default = TIME_PARAMS[prm.name]
            p.add_argument(
                flag,
                dest=prm.name,
                default=default,
                metavar="TIME",
                help=f"{prm.doc.split(',')[0]} (default {default})",
            )
        else:
            p.add_argument(
                "--" + prm.name.replace("_", "-"),
                dest=prm.name,
                required=prm.default is None,
                metavar=prm.type.upper(),
                help=prm.doc + ("" if prm.default is None else f" (default {prm.default})"),
            )
    output.add_option(p)
    p.add_argument("--raw-times", action="store_true", help="table with times in microseconds, not ISO 8601")
    p.add_argument("--cgroups", action="store_true", help="show Kubernetes tasks as their cgroups, not namespace/pod")
    p.add_argument("--sql", action="store_true", help="print the rendered SQL instead of running it")
    p.set_defaults(func=run, query_name=name, query_params=[x.name for x in ps])
    return p


def _doc(name):
    """The comment at the head of the query file, before its parameters."""
    lines = []
    for line in forensics.text(name).splitlines():
        if not line.startswith("--") or line.startswith("-- param"):
            break
        lines.append(line[2:].strip())
    return " ".join(lines) or name


def values(args):
    """The query's parameters from parsed arguments; the window is checked (TimeError)."""
    out = {}
    if "from_us" in args.query_params or "to_us" in args.query_params:
        out["from_us"], out["to_us"] = timerange.window(args.from_us, args.to_us)
    if "at_us" in args.query_params:
        out["at_us"] = timerange.parse(args.at_us)
    for n in args.query_params:
        if n not in TIME_PARAMS and getattr(args, n) is not None:
            out[n] = getattr(args, n)
    return out


def pods_to_cgroups(args, vals, ch):
    """Task parameters given as namespace/pod, as the cgroups the tables hold (tasks.cgroup)."""
    for n in args.query_params:
        if (n == "task" or n.endswith("_task")) and vals.get(n):
            vals[n] = tasks.cgroup(
                ch, args.database, vals.get("host", ""), vals[n], vals.get("to_us") or timerange.now_us()
            )
    return vals


def run(args, out):
    vals = values(args)
    if args.sql:
        print(forensics.render(args.query_name, vals, args.database), file=out)
        return 0
    ch = args.settings.clickhouse_client()
    vals = pods_to_cgroups(args, vals, ch)
    cols, rows = forensics.run(args.query_name, vals, database=args.database, ch=ch)
    if not args.cgroups:
        at = vals.get("at_us")
        window = (
            (vals["from_us"], vals["to_us"])
            if "from_us" in vals
            else (at - 8 * tasks.DAY_US, at)
            if at
            else (None, None)
        )
        rows = tasks.show(ch, args.database, cols, rows, *window)
    print(output.rows_text(args.output, cols, rows, args.raw_times), file=out)
    return 0
