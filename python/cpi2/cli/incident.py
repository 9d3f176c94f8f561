"""`cpi2ctl incident show ID`: the victim's CPI (or the signal its incident was detected on) next to
the antagonist's CPU usage around an incident, with the antagonist's caps shaded (paper figure 9),
written to a PNG. The series come from the forensics query victim_vs_antagonist; only the incident
itself is looked up here."""

import datetime as dt
import re

from cpi2.cli import output, tasks, timerange
from cpi2.clickhouse import forensics

# One incident by id, with its rank-1 suspect for incidents that capped nobody.
_LOOKUP = """
SELECT incident_id, host, detected_at_us, victim_task, victim_job, decision, victim_cpi, cpi_threshold,
       window_start_us, window_end_us, ifNull(antagonist_task, '') AS antagonist_task,
       ifNull(cap_duration_s, 0) AS cap_duration_s, signal,
       ifNull((SELECT any(task) FROM {db}.incident_suspects FINAL WHERE incident_id = {id} AND rank = 1), '') AS top_suspect
FROM {db}.incidents FINAL
WHERE incident_id = {id}
LIMIT 1
"""


def signal_label(inc):
    """What the incident's victim values are: CPI, or the signal it was detected on."""
    return "CPI" if inc["signal"] == "cpi" else inc["signal"]


class IncidentError(Exception):
    """Unknown incident, or nothing to plot; str() says which."""


def lookup(incident_id, ch, database):
    """The incident as a dict (IncidentError when there is none)."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", database):
        raise IncidentError(f"database name {database!r} is not a plain identifier")
    sql = _LOOKUP.format(db=database, id=forensics.literal("String", incident_id))
    cols, rows = forensics.select(ch, sql, "incident lookup")
    if not rows:
        raise IncidentError(f"unknown incident {incident_id!r} (not in {database}.incidents at {ch.url})")
    return dict(zip(cols, rows[0]))


def series(inc, ch, database, before_s, after_s, bucket_s, antagonist=None):
    """(antagonist task, from_us, to_us, columns, rows) of victim_vs_antagonist around the incident."""
    ant = antagonist or inc["antagonist_task"] or inc["top_suspect"]
    if not ant:
        raise IncidentError(f"incident {inc['incident_id']} has no antagonist and no suspect; give --antagonist TASK")
    from_us = min(inc["window_start_us"], inc["detected_at_us"]) - before_s * 1_000_000
    to_us = inc["detected_at_us"] + (max(inc["cap_duration_s"], 0) + after_s) * 1_000_000
    cols, rows = forensics.run(
        "victim_vs_antagonist",
        {
            "host": inc["host"],
            "victim_task": inc["victim_task"],
            "antagonist_task": ant,
            "from_us": from_us,
            "to_us": to_us,
            "bucket_s": bucket_s,
            "signal": inc["signal"],
        },
        database=database,
        ch=ch,
    )
    if not rows:
        raise IncidentError(
            f"no samples of {inc['victim_task']} or {ant} on {inc['host']} between "
            f"{timerange.iso(from_us)} and {timerange.iso(to_us)}"
        )
    return ant, from_us, to_us, cols, rows


def cap_spans(rows, idx, bucket_us):
    """[(start_us, end_us)] of consecutive capped buckets."""
    spans = []
    for r in rows:
        if r[idx["capped"]]:
            start = r[idx["bucket_start_us"]]
            if spans and spans[-1][1] == start:
                spans[-1] = (spans[-1][0], start + bucket_us)
            else:
                spans.append((start, start + bucket_us))
    return spans


def plot(inc, ant, cols, rows, bucket_s, path):
    """Writes the PNG; returns the cap spans shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    idx = {c: i for i, c in enumerate(cols)}
    t = lambda us: dt.datetime.fromtimestamp(us / 1e6, dt.timezone.utc)  # noqa: E731
    spans = cap_spans(rows, idx, bucket_s * 1_000_000)
    victim = [(t(r[idx["bucket_start_us"]]), r[idx["victim_cpi"]]) for r in rows if r[idx["victim_cpi"]] is not None]
    usage = [
        (t(r[idx["bucket_start_us"]]), r[idx["antagonist_cpu_usage"]])
        for r in rows
        if r[idx["antagonist_cpu_usage"]] is not None
    ]

    fig, ax = plt.subplots(figsize=(10, 4.5), dpi=100)
    ax2 = ax.twinx()
    for i, (a, b) in enumerate(spans):
        ax.axvspan(t(a), t(b), color="tab:red", alpha=0.15, label="antagonist capped" if i == 0 else None)
    if victim:
        ax.plot(
            *zip(*victim),
            color="tab:blue",
            marker="o",
            ms=3,
            label=f"victim {signal_label(inc)} ({inc['victim_task']})",
        )
    ax.axhline(
        inc["cpi_threshold"],
        color="tab:blue",
        ls="--",
        lw=1,
        label=f"{signal_label(inc)} threshold {inc['cpi_threshold']:g}",
    )
    ax.axvline(t(inc["detected_at_us"]), color="black", ls=":", lw=1, label="detected")
    if usage:
        ax2.plot(*zip(*usage), color="tab:orange", marker="s", ms=3, label=f"antagonist CPU ({ant})")
    ax.set_ylabel(f"victim {signal_label(inc)}")
    ax2.set_ylabel("antagonist CPU usage (CPU-sec/sec)")
    ax.set_ylim(bottom=0)
    ax2.set_ylim(bottom=0)
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M", tz=dt.timezone.utc))
    ax.set_xlabel(f"UTC, {bucket_s} s buckets, {t(rows[0][idx['bucket_start_us']]):%Y-%m-%d}")
    ax.set_title(f"incident {inc['incident_id']} on {inc['host']}: {inc['decision']}")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    fig.legend(h1 + h2, l1 + l2, loc="lower center", ncol=5, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, format="png")
    plt.close(fig)
    return spans


def default_path(incident_id):
    return "incident-" + re.sub(r"[^A-Za-z0-9._-]+", "_", incident_id) + ".png"


def add_parsers(sub, parents=()):
    p = sub.add_parser("incident", help="look at one incident")
    s = p.add_subparsers(dest="incident_cmd", metavar="COMMAND", required=True)
    show = s.add_parser(
        "show",
        help="plot victim CPI vs antagonist CPU usage with caps shaded (PNG)",
        description="The incident, and a plot of the victim's CPI and the antagonist's CPU usage around "
        "it, with the antagonist's caps shaded (paper figure 9), in a PNG. -o json/yaml: the incident and "
        "the plotted series.",
        parents=list(parents),
    )
    show.add_argument("incident_id", metavar="ID", help="incident id (see `cpi2ctl incidents`)")
    show.add_argument("--png", metavar="FILE", help="the plot's path (default incident-<ID>.png)")
    show.add_argument("--antagonist", help="task to plot against the victim (default: the capped one, else suspect 1)")
    show.add_argument(
        "--before", type=int, default=600, help="seconds shown before the correlation window (default %(default)s)"
    )
    show.add_argument(
        "--after", type=int, default=600, help="seconds shown after detection + cap duration (default %(default)s)"
    )
    show.add_argument("--bucket", type=int, default=60, help="seconds per point (default %(default)s)")
    output.add_option(show)
    show.set_defaults(func=run)


def run(args, out):
    for name in ("before", "after", "bucket"):
        if getattr(args, name) < (1 if name == "bucket" else 0):
            raise timerange.TimeError(
                f"--{name} {getattr(args, name)}: must be {'positive' if name == 'bucket' else '0 or more'}"
            )
    ch = args.settings.clickhouse_client()
    inc = lookup(args.incident_id, ch, args.database)
    ant, from_us, to_us, cols, rows = series(
        inc, ch, args.database, args.before, args.after, args.bucket, args.antagonist
    )
    path = args.png or default_path(inc["incident_id"])
    spans = plot(inc, ant, cols, rows, args.bucket, path)
    names = tasks.pod_names(ch, args.database, [inc["victim_task"], ant], from_us, to_us, [inc["host"]])
    line = (
        f"incident {inc['incident_id']} on {inc['host']} at {timerange.iso(inc['detected_at_us'])}: "
        f"victim {names.get(inc['victim_task'], inc['victim_task'])} ({signal_label(inc)} {inc['victim_cpi']:g}, "
        f"threshold {inc['cpi_threshold']:g}), antagonist {names.get(ant, ant)}, decision {inc['decision']}; "
        f"{len(rows)} points, {len(spans)} cap interval(s) from {timerange.iso(from_us)} to {timerange.iso(to_us)} "
        f"-> {path}"
    )
    record = dict(
        inc,
        antagonist_plotted=ant,
        png=path,
        cap_intervals_us=[list(s) for s in spans],
        series=[dict(zip(cols, r)) for r in rows],
    )
    print(output.record_text(args.output, record, line), file=out)
    return 0
