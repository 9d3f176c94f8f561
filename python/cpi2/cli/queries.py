"""`cpi2ctl query NAME`: one subcommand per forensics query of clickhouse/queries/*.sql, with the
options generated from the query's own '-- param' declarations (forensics.params)."""

import re

from cpi2.cli import output, timerange
from cpi2.clickhouse import forensics

TIME_PARAMS = {"from_us": ("--from", "-24h"), "to_us": ("--to", "now")}


def cli_name(query):
    return query.replace("_", "-")


def add_parsers(sub):
    """Adds `query` and its subcommands to an argparse subparsers object."""
    q = sub.add_parser(
        "query",
        help="run a forensics query (clickhouse/queries/*.sql)",
        description="Run a named forensics query over the CPI2 tables. Times: now, -2h, -1d, "
        "ISO 8601 (UTC unless an offset is given) or microseconds since the epoch.",
    )
    qs = q.add_subparsers(dest="query", metavar="QUERY", required=True)
    for name in forensics.names():
        ps = forensics.params(name)
        doc = _doc(name)
        p = qs.add_parser(cli_name(name), help=re.split(r"[:.] |\(", doc, maxsplit=1)[0].strip(), description=doc)
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
                flag = "--" + prm.name.replace("_", "-")
                p.add_argument(
                    flag,
                    dest=prm.name,
                    required=prm.default is None,
                    metavar=prm.type.upper(),
                    help=prm.doc + ("" if prm.default is None else f" (default {prm.default})"),
                )
        p.add_argument("--json", action="store_true", help="JSON array of rows (times stay in microseconds)")
        p.add_argument("--raw-times", action="store_true", help="table with times in microseconds, not ISO 8601")
        p.add_argument("--sql", action="store_true", help="print the rendered SQL instead of running it")
        p.set_defaults(func=run, query_name=name, query_params=[x.name for x in ps])
    return q


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
    for n in args.query_params:
        if n not in TIME_PARAMS and getattr(args, n) is not None:
            out[n] = getattr(args, n)
    return out


def run(args, out):
    vals = values(args)
    if args.sql:
        print(forensics.render(args.query_name, vals, args.database), file=out)
        return 0
    cols, rows = forensics.run(args.query_name, vals, url=args.clickhouse, database=args.database)
    print(output.as_json(cols, rows) if args.json else output.table(cols, rows, args.raw_times), file=out)
    return 0
