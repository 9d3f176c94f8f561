"""Benchmark: detection quality on the scenario set (issues 7, 23, 26), over the whole real system,
with both correlation policies side by side.

Each scenario plays through the local stack (cpi2-fleetsim -> Kafka -> the Flink job ->
cpi2-enforcer on the simulator's cgroup tree) with a fresh job per scenario and policy (the job's
option `--correlation.policy project|paper`); quality.py compares what was named and capped with
the simulator's ground truth. Per run: THROTTLE incidents, precision with the victim-aware scorer
(target >= 0.95), recall (>= 0.9), caps on latency-sensitive tasks (none), time from a victim's
onset to its first analysis (p50, max, in event time: the incidents' analysed_at_us), onset to
the first cap on the simulator's clock (p50, max; faster than real time every wall-clock second
counts `speed` simulated seconds, so only the 1x runs give the real figure), the same in event
time (p50, max: the analysis time of the incident behind the cap plus the enforcer's real delay,
free of the speed-up; target <= 3 periods + 5 s = 185 s), the enforcer's real delay (p50) and
onset to the analysis time of the first right THROTTLE (p50).

  bench_detection.py [--policies project,paper] [--jar JAR] [--seed N] [--keep] [--report FILE] [SCENARIO[:SPEED[:DURATION]] ...]

Default scenarios: the paper's cases 1-6 and the regression scenarios at 240x for 1 h, fleet300
at 120x for 4 h, and case 2 in real time (1x, 8 min) for the latency a real deployment sees.
`--jar` runs another build of the job (an earlier release, to compare before and after).
`--keep` keeps each run's work folder (the simulator's and the enforcer's logs, the ground truth,
and the incidents and actions the run read, as JSON lines: incidents.jsonl, actions.jsonl) and
prints its path; without it the folder is deleted. `--report FILE` writes the conditions (date,
commit, command, machine and its load), a table of every run and the totals between the file's
bench_detection markers, keeping what is written around them (bench-report/detection.md).
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

from cpi2.e2e import pipeline, quality

PAPER = ["case1", "case2", "case3", "case4", "case5", "case6"]
REGRESSION = ["starvation", "starvation-pairs", "innocent", "lowcpu"]
DEFAULT = ["%s:240:1h" % s for s in PAPER + REGRESSION] + ["fleet300:120:4h", "case2:1:8m"]
POLICIES = ("project", "paper")


def loadavg():
    """The machine's load averages over 1, 5 and 15 minutes, as /proc/loadavg gives them."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def save_outputs(run):
    """Writes what the run's monitor read into its work folder, one JSON record a line, each with
    the wall-clock second the monitor first read it (read_at): incidents.jsonl, actions.jsonl."""
    read_at = getattr(run.monitor, "read_at", {})
    for name, kind, key, records in (
        ("incidents.jsonl", "Incident", "incident_id", run.monitor.incidents),
        ("actions.jsonl", "EnforcementAction", "action_id", run.monitor.actions),
    ):
        with open(os.path.join(run.dir, name), "w") as f:
            for r in records:
                f.write(json.dumps(dict(r, read_at=read_at.get((kind, r.get(key)))), default=str) + "\n")


def play(spec, policy, seed=1, jar=None, keep=False):
    name, speed, duration = (spec.split(":") + ["240", "1h"])[:3]
    job_args = ["--correlation.policy", policy] if policy else []
    run = pipeline.Run(
        name,
        speed=float(speed),
        duration=duration,
        seed=seed,
        settle_warmup=True,
        job_args=job_args,
        job_jar=jar,
    )
    t0 = time.time()
    run.start()
    try:
        run.wait(3 * 3600, settle=20)
    finally:
        run.stop()
    q = quality.measure(run.truth(), run.monitor)
    q["scenario"], q["policy"], q["speed"], q["wall_s"], q["load"] = (
        "%s (%s at %gx)" % (name, duration, float(speed)),
        policy or "-",
        float(speed),
        time.time() - t0,
        loadavg(),
    )
    if keep:
        save_outputs(run)
        q["workdir"] = run.dir
        print("  work folder of %s (%s): %s" % (q["scenario"], q["policy"], run.dir), flush=True)
    else:
        run.cleanup()
    return q


def cells(q):
    """One run's figures as text, in the order of the console's and the report's columns."""
    f = quality.fmt
    return [
        q["scenario"],
        q["policy"],
        "%d" % q["throttles"],
        f(q["precision"]),
        "%d/%d" % (q["found"], q["real"]),
        f(q["recall"]),
        "%d" % q["ls_caps"],
        "%s/%s" % (f(q["analysis_median"], "%.0f"), f(q["analysis_max"], "%.0f")),
        "%d/%d" % (q["victims_analysed"], q["victims"]),
        "%s/%s" % (f(q["cap_event_median"], "%.0f"), f(q["cap_event_max"], "%.0f")),
        "%s/%s" % (f(q["latency_median"], "%.0f"), f(q["latency_max"], "%.0f")),
        f(q["event_latency_median"], "%.0f"),
        f(median(q["enforcer_delays"]), "%.1f"),
        "%.0f" % q["wall_s"],
    ]


# the console's column widths (negative: left-aligned) and headers, for cells()
WIDTHS = (-26, -7, 9, 9, 6, 6, 5, 16, 9, 15, 15, 10, 6, 6)
HEADERS = (
    "scenario",
    "policy",
    "throttles",
    "precision",
    "found",
    "recall",
    "LS",
    "analysis p50/max",
    "analysed",
    "ev.cap p50/max",
    "cap p50/max",
    "event p50",
    "enf s",
    "wall s",
)


def row(values):
    return "  " + " ".join("%*s" % (w, v) for w, v in zip(WIDTHS, values))


def median(xs):
    return statistics.median(xs) if xs else None


def verdict(ok):
    return "met" if ok else "NOT met"


def summary(rows, policy):
    """The totals of one policy over every scenario, printed and returned as lines."""
    out = []
    rows = [q for q in rows if q["policy"] == policy]
    f = quality.fmt
    throttles, correct = sum(q["throttles"] for q in rows), sum(q["correct"] for q in rows)
    real, found = sum(q["real"] for q in rows), sum(q["found"] for q in rows)
    p = correct / throttles if throttles else None
    r = found / real if real else None
    ls = sum(q["ls_caps"] for q in rows)
    out.append(
        "  %s: precision %s (%d of %d; target >= 0.95: %s), recall %s (%d of %d; target >= 0.9: %s), caps on latency-sensitive tasks %d (target 0: %s)"
        % (
            policy,
            f(p),
            correct,
            throttles,
            verdict(p is not None and p >= 0.95),
            f(r),
            found,
            real,
            verdict(r is not None and r >= 0.9),
            ls,
            verdict(ls == 0),
        )
    )
    analysed = sorted(x for q in rows for x in q["analysis_latencies"])
    victims = sum(q["victims"] for q in rows)
    if victims:
        out.append(
            "  %s: first analysis of a victim after its onset: %d of %d victims analysed, p50 %s s, max %s s (every victim within %d s: %s)"
            % (
                policy,
                len(analysed),
                victims,
                f(analysed[len(analysed) // 2] if analysed else None, "%.0f"),
                f(analysed[-1] if analysed else None, "%.0f"),
                quality.LATENCY_TARGET_S,
                verdict(len(analysed) == victims and analysed[-1] <= quality.LATENCY_TARGET_S),
            )
        )
    event = sorted(x for q in rows for x in q["cap_event_latencies"])
    if event:
        out.append(
            "  %s: onset to cap in event time (analysis time + the enforcer's real delay) over %d capped antagonists: p50 %.0f s, max %.0f s (target <= %d s: %s)"
            % (
                policy,
                len(event),
                event[len(event) // 2],
                event[-1],
                quality.LATENCY_TARGET_S,
                verdict(event[-1] <= quality.LATENCY_TARGET_S),
            )
        )
    realtime = [q for q in rows if q["speed"] == 1]
    lat = sorted(x for q in (realtime or rows) for x in q["latencies"])
    if lat:
        out.append(
            "  %s: onset to cap over %d capped antagonists%s: p50 %.0f s, max %.0f s (target <= %d s: %s)"
            % (
                policy,
                len(lat),
                " of the real-time runs" if realtime else " (accelerated runs: wall delays x speed)",
                lat[len(lat) // 2],
                lat[-1],
                quality.LATENCY_TARGET_S,
                verdict(lat[-1] <= quality.LATENCY_TARGET_S),
            )
        )
    for line in out:
        print(line)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("specs", nargs="*", help="SCENARIO[:SPEED[:DURATION]] (default: %s)" % " ".join(DEFAULT))
    ap.add_argument(
        "--policies",
        default=",".join(POLICIES),
        help="comma-separated correlation policies, each run apart (default project,paper; 'none' passes no option, for builds without it)",
    )
    ap.add_argument("--jar", help="the job's jar (default: flink-jobs' build)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--keep",
        action="store_true",
        help="keep each run's work folder (logs, truth, incidents.jsonl, actions.jsonl) and print its path",
    )
    ap.add_argument(
        "--report",
        help="write the conditions, a table per scenario and policy and the totals into this Markdown file, "
        "between its bench_detection markers (the rest of the file is kept); e.g. bench-report/detection.md",
    )
    a = ap.parse_args(argv)
    policies = [None if p == "none" else p for p in a.policies.split(",")]
    rows = []
    load_before = loadavg()
    for spec in a.specs or DEFAULT:
        for policy in policies:
            rows.append(play(spec, policy, a.seed, a.jar, a.keep))
            print(row(cells(rows[-1])), flush=True)
    print(
        "detection quality against the simulator's ground truth (fresh job per scenario and policy, seed %d%s; the 6 h warm-up played first and read by the job before the scripted part)"
        % (a.seed, ", job " + a.jar if a.jar else "")
    )
    print(row(HEADERS))
    for q in rows:
        print(row(cells(q)))
    for q in rows:
        for host, antagonist in q["missed"]:
            print("  missed in %s (%s): %s on %s" % (q["scenario"], q["policy"], antagonist, host))
        for host, task, at_us in q["exits"]:
            print("  exited in %s (%s): %s on %s at %d" % (q["scenario"], q["policy"], task, host, at_us))
    totals = []
    for policy in policies:
        totals += summary(rows, policy or "-")
    if a.report:
        write_report(a.report, argv if argv is not None else sys.argv[1:], a.seed, rows, totals, load_before)


BEGIN, END = "<!-- bench_detection: begin -->", "<!-- bench_detection: end -->"


def report_lines(args, seed, rows, totals, load_before):
    """The measured part of the report: conditions, one table row per run, the totals."""
    commit = subprocess.run(
        ["git", "-C", pipeline.ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    lines = [
        BEGIN,
        "",
        "- date: %s, commit %s (with the working tree's changes, if any)"
        % (datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), commit),
        "- command: `python -m cpi2.e2e.bench_detection %s` (seed %d), stack `%s`"
        % (" ".join(args), seed, os.environ.get("STACK_ENV", "stack/stack.env")),
        "- machine: %d cores, %s; load average (1, 5, 15 min) %s before, %s after"
        % (os.cpu_count(), platform.platform(), load_before, loadavg()),
        "- each run: a fresh job, the scenario's warm-up played at full speed and read by the job, then the"
        " scripted part at the speed given; precision with the victim-aware scorer (cpi2.e2e.quality);"
        ' times are seconds after the onset; "ev." is event time; target for onset to cap %d s'
        % quality.LATENCY_TARGET_S,
        "",
        "| scenario | policy | THROTTLEs | precision | found | recall | LS caps | first analysis p50/max"
        " | victims analysed | onset to cap, ev. p50/max | onset to cap, sim. clock p50/max"
        " | onset to first right THROTTLE, ev. p50 | enforcer s p50 | wall s | load after |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for q in rows:
        lines.append("| %s |" % " | ".join(cells(q) + [q.get("load", "-")]))
    lines += [""]
    for q in rows:
        for host, antagonist in q["missed"]:
            lines.append("- missed in %s (%s): %s on %s" % (q["scenario"], q["policy"], antagonist, host))
    lines += ["", "Totals:", ""] + ["- " + t.strip() for t in totals] + ["", END]
    return lines


def write_report(path, args, seed, rows, totals, load_before):
    """Writes the measured part between the markers of path, keeping what is around them (a new
    file gets a title and the markers)."""
    text = open(path).read() if os.path.exists(path) else "# Detection quality bench\n\n%s\n%s\n" % (BEGIN, END)
    if BEGIN not in text or END not in text:
        raise RuntimeError("%s has no %s ... %s markers" % (path, BEGIN, END))
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    with open(path, "w") as out:
        out.write(head + "\n".join(report_lines(args, seed, rows, totals, load_before)) + tail)


if __name__ == "__main__":
    main()
