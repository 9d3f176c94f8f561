"""`cpi2ctl advise`: placement advice from the interference history (issue 22): the job pairs
that should not share a machine or a NUMA node, ranked with their evidence (ClickHouse's
placement_advice query), as a table, a JSON score file, or Kubernetes pod anti-affinity terms."""

import json

from cpi2.cli import output, timerange
from cpi2.numa import advise


def add_parsers(sub):
    p = sub.add_parser(
        "advise",
        help="job pairs that should not share a machine or NUMA node (placement advice)",
        description=__doc__,
    )
    p.add_argument("--from", dest="from_us", default="-7d", metavar="TIME", help="window start (default -7d)")
    p.add_argument("--to", dest="to_us", default="now", metavar="TIME", help="window end (default now)")
    p.add_argument("--signal", default="", help="incidents of this signal only (default: every signal)")
    p.add_argument("--limit", type=int, default=100, help="pairs read (default 100)")
    p.add_argument(
        "--format",
        choices=("table", "json", "k8s-yaml", "k8s-json"),
        default="table",
        help="table (every pair with its evidence), json (the score file of the advised pairs), "
        "k8s-yaml / k8s-json (pod anti-affinity per job)",
    )
    p.add_argument("--label-key", default="app", help="the pod label that names a job (default app)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    p.set_defaults(func=run)
    return p


def run(args, out):
    from_us, to_us = timerange.window(args.from_us, args.to_us)
    rows = advise.pairs(
        from_us, to_us, url=args.clickhouse, database=args.database, limit=args.limit, signal=args.signal
    )
    if args.format == "table":
        cols = list(rows[0]) if rows else ["victim_job", "antagonist_job", "score"]
        text = output.table(cols, [tuple(r.values()) for r in rows], False)
    elif args.format == "json":
        text = json.dumps(advise.score_file(rows, from_us, to_us), indent=1)
    elif args.format == "k8s-json":
        text = json.dumps(advise.anti_affinity(rows, args.label_key), indent=1)
    else:
        text = advise.to_yaml(advise.anti_affinity(rows, args.label_key))
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    else:
        print(text, file=out)
    return 0
