"""`cpi2ctl advise`: placement advice from the interference history (issue 22): the job pairs
that should not share a machine or a NUMA node, ranked with their evidence (ClickHouse's
placement_advice query): -o table (every pair with its evidence), -o json / yaml (the score file
of the advised pairs), or with --anti-affinity Kubernetes pod anti-affinity terms per job."""

import json

from cpi2.cli import output, timerange
from cpi2.numa import advise


def add_parsers(sub, parents=()):
    p = sub.add_parser(
        "advise",
        help="job pairs that should not share a machine or NUMA node (placement advice)",
        description=__doc__,
        parents=list(parents),
    )
    p.add_argument("--from", dest="from_us", default="now-7d", metavar="TIME", help="window start (default now-7d)")
    p.add_argument("--to", dest="to_us", default="now", metavar="TIME", help="window end (default now)")
    p.add_argument("--signal", default="", help="incidents of this signal only (default: every signal)")
    p.add_argument("--limit", type=int, default=100, help="pairs read (default 100)")
    p.add_argument(
        "--anti-affinity",
        action="store_true",
        help="print pod anti-affinity per job (Kubernetes; yaml unless -o json)",
    )
    p.add_argument("--label-key", default="app", help="the pod label that names a job (default app)")
    output.add_option(p)
    p.set_defaults(func=run)
    return p


def run(args, out):
    from_us, to_us = timerange.window(args.from_us, args.to_us)
    rows = advise.pairs(
        from_us,
        to_us,
        database=args.database,
        limit=args.limit,
        signal=args.signal,
        ch=args.settings.clickhouse_client(),
    )
    if args.anti_affinity:
        doc = advise.anti_affinity(rows, args.label_key)
        text = json.dumps(doc, indent=1) if args.output == "json" else advise.to_yaml(doc)
    elif args.output == "table":
        cols = list(rows[0]) if rows else ["victim_job", "antagonist_job", "score"]
        text = output.table(cols, [tuple(r.values()) for r in rows])
    else:
        text = output.record_text(args.output, advise.score_file(rows, from_us, to_us), "")
    print(text, file=out)
    return 0
