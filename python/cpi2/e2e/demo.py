"""make demo: the whole system on a simulated fleet, with a progress line while it runs; then a
short summary, the forensics answers through cpi2ctl, the plot of the most severe incident that
was capped (caps shaded), an HTML report of every Grafana panel over the run, and the cpi2ctl
commands that explore the run, each checked to return rows. The stack stays up afterwards for
exploration (make down stops it).

The simulated clock ends when the wall clock does: the warm-up is played first, in the past, and
the scripted part starts where it ends about when the demo does; then "now" means the same to the
fleet and to its operator (`cpi2ctl caps` shows the caps the enforcer holds as the run ends;
`--from now-1d` finds the run). The enforcer runs on until the demo ends, its caps in force.

  demo.py [--scenario fleet300] [--speed 120] [--duration 4h] [--seed 1] [--workdir DIR]
"""

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import statistics
import sys
import time

from cpi2 import repo
from cpi2.cli import main as cpi2ctl
from cpi2.cli import timerange
from cpi2.e2e import pipeline, quality
from cpi2.e2e.pipeline import stack

SCENARIOS = repo.ROOT / "collectors" / "fleetsim" / "scenarios"
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def seconds(text):
    """'4h', '30m', '90s', '1d' or a number of seconds -> seconds."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([smhd]?)", text.strip())
    if not m:
        raise ValueError(f"duration {text!r}: expected a number and s, m, h or d")
    return float(m.group(1)) * _UNIT_S.get(m.group(2) or "s", 1)


def scenario_span(name, duration=None):
    """(warm-up, duration) in seconds of a scenario file's [scenario] section; duration overrides."""
    section, keys = None, {}
    for line in (SCENARIOS / f"{name}.scn").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("["):
            section = line.strip("[]").strip()
        elif section == "scenario" and "=" in line:
            k, v = line.split("=", 1)
            keys[k.strip()] = v.strip()
    return seconds(keys.get("warmup", "6h")), seconds(duration or keys.get("duration", "1h"))


def ctl(*argv):
    """cpi2ctl in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = cpi2ctl.main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def rows_of(argv):
    """How many rows (or records) a cpi2ctl command gives, from its JSON output; -1 when it fails."""
    code, out, _ = ctl(*argv, "-o", "json")
    if code != 0:
        return -1
    doc = json.loads(out)
    if isinstance(doc, dict):  # a record: its series (incident show), its pairs (advise), else its keys
        doc = doc.get("series", doc.get("pairs", doc))
    return len(doc)


def capped_incidents(m):
    """THROTTLE incidents whose enforcer applied a cap, most severe (victim value over the spec's
    mean) first."""
    applied = {a["incident_id"] for a in m.actions if a["kind"] == "APPLIED" and a.get("incident_id")}
    throttles = [i for i in m.incidents if i["decision"] == "THROTTLE" and i["incident_id"] in applied]
    return sorted(throttles, key=lambda i: i["victim_cpi"] / max(i["spec_mean"], 1e-9), reverse=True)


def wait_for_rows(inc, end_us):
    """The ClickHouse sinks write in batches: wait (bounded) until the incident, its suspects, its
    cap and the run's last samples are there."""
    iid = inc["incident_id"].replace("'", "\\'")
    sql = (
        f"SELECT (SELECT count() FROM cpi2.incidents WHERE incident_id = '{iid}') * "
        f"(SELECT count() FROM cpi2.incident_suspects WHERE incident_id = '{iid}') * "
        f"(SELECT count() FROM cpi2.actions WHERE incident_id = '{iid}' AND kind = 'APPLIED') * "
        f"(SELECT count() FROM cpi2.samples WHERE window_start_us >= {end_us - 600_000_000})"
    )
    try:
        with pipeline.ticking("waiting for the run's last rows in ClickHouse"):
            stack.wait_until(lambda: stack.query(sql) != "0", 180, "the run's rows in ClickHouse", 2)
    except AssertionError as e:
        print("(%s: what follows may miss some)" % e)


def summary(run, m, q):
    kinds = m.action_kinds()
    rel = [o["relative_cpi"] for o in m.outcomes]
    print()
    print("==== CPI² demo summary (%s) ====" % run.scenario)
    print("incidents: %d; by decision: %s" % (len(m.incidents), dict(m.decisions())))
    print(
        "antagonists named (THROTTLE incidents): %d, of them right per the ground truth: %d (precision %s)"
        % (q["throttles"], q["correct"], quality.fmt(q["precision"]))
    )
    print(
        "real antagonists the policy caps (batch or best-effort hurting a latency-sensitive task): %d, found: %d"
        " (recall %s)" % (q["real"], q["found"], quality.fmt(q["recall"]))
    )
    print(
        "caps applied %d, renewed %d, lifted %d, refused %d, failed %d"
        % tuple(kinds.get(k, 0) for k in ("APPLIED", "RENEWED", "RELEASED", "REFUSED", "FAILED"))
    )
    print(
        "outcomes: %s; median relative victim CPI while capped: %s"
        % (dict(m.verdicts()), "%.2f" % statistics.median(rel) if rel else "n/a")
    )
    print("dead letters: %d" % len(m.dead_letters))
    if q["latencies"]:
        print(
            "detection latency, antagonist onset to its first cap (simulated s): median %.0f, max %.0f over %d"
            " antagonists (target: 3 sampling periods + 5 s = %d s)"
            % (q["latency_median"], q["latency_max"], len(q["latencies"]), quality.LATENCY_TARGET_S)
        )
    if q["ls_caps"]:
        print("WARNING: %d caps on latency-sensitive tasks" % q["ls_caps"])


def plot(run, candidates):
    """The PNG of the most severe capped incident whose plot shades a cap: (incident, path, record)."""
    for inc in candidates[:5]:
        png = os.path.join(run.dir, "most-severe-capped-incident.png")
        code, out, err = ctl("incident", "show", inc["incident_id"], "--png", png, "-o", "json")
        if code == 0 and json.loads(out)["cap_intervals_us"]:
            return inc, png, json.loads(out)
        print("(incident %s: %s)" % (inc["incident_id"], (err.strip() or "no cap interval in its plot")[-300:]))
    return None, None, None


def write_report(run, window, inc):
    """The HTML report of every dashboard panel over the run's window; returns its path and counts."""
    from cpi2.clickhouse import chclient
    from cpi2.grafana import report

    overrides = {}
    if inc:
        overrides = {
            "cpi2-incident:incident": inc["incident_id"],
            "cpi2-job:job": inc["victim_job"],
            "cpi2-job:platform": inc["victim_platform"],
            "cpi2-job:signal": inc.get("signal") or "cpi",
            "cpi2-host:host": inc["host"],
        }
    with pipeline.ticking("drawing the HTML report: every panel's SQL over the run"):
        page, counts, titles = report.report(
            chclient.connect(stack.CLICKHOUSE),
            "cpi2",
            *window,
            overrides,
            title="CPI² demo: %s" % run.scenario,
            note="The run's work folder: %s." % run.dir,
        )
    path = os.path.join(run.dir, "cpi2-report.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    return path, counts, titles


def cap_at_us(m, inc):
    """An instant the incident's first cap was in force: halfway through it."""
    a = min(
        (x for x in m.actions if x["kind"] == "APPLIED" and x["incident_id"] == inc["incident_id"]),
        key=lambda x: x["at_us"],
    )
    return (a["at_us"] + a["expires_at_us"]) // 2


def explore_commands(window, inc, record, m, png):
    """The cpi2ctl commands that explore this run, with its absolute window: [(argv, rows)]."""
    a, b = (timerange.iso(x) for x in window)
    cmds = [["incidents", "--from", a, "--to", b, "--decision", "THROTTLE", "--limit", "10"]]
    if inc:
        ant = record["antagonist_plotted"]
        cmds += [
            ["query", "top-antagonists", "--job", inc["victim_job"], "--from", a, "--to", b],
            ["query", "victim-incidents", "--victim-task", inc["victim_task"], "--from", a, "--to", b],
            ["caps", "--at", timerange.iso(cap_at_us(m, inc)), "--host", inc["host"]],
            ["incident", "show", inc["incident_id"], "--png", png],
            [
                "query",
                "victim-vs-antagonist",
                "--host",
                inc["host"],
                "--victim-task",
                inc["victim_task"],
                "--antagonist-task",
                ant,
                "--from",
                timerange.iso(record["window_start_us"] - 1_800_000_000),
                "--to",
                timerange.iso(record["detected_at_us"] + 1_800_000_000),
            ],
        ]
    if any(v > timerange.now_us() for v in m.caps.values()):  # the enforcer holds caps now
        cmds.append(["caps"])
    cmds += [["advise", "--from", a, "--to", b], ["protection", "status"]]
    return [(c, rows_of(c)) for c in cmds]


def show(title, argv):
    print("\n$ cpi2ctl %s    # %s" % (shlex.join(argv), title))
    code, out, err = ctl(*argv)
    print((out or err).rstrip())


def main(argv=None, before_stop=None):
    """Plays the demo; returns what it found (a dict). before_stop(result) runs, if given, while
    the run's enforcer still holds its caps (the tests run the documented commands there)."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", default="fleet300")
    p.add_argument("--speed", type=float, default=120, help="simulated seconds per second after the warmup")
    p.add_argument("--duration", default=None, help="simulated duration after the warmup (default: the scenario's)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workdir", default=None, help="the run's folder (default a new one under /tmp)")
    a = p.parse_args(argv)
    warmup_s, duration_s = scenario_span(a.scenario, a.duration)
    start_s = int(time.time() - warmup_s - duration_s) // 60 * 60
    if a.workdir:
        os.makedirs(a.workdir, exist_ok=True)
    run = pipeline.Run(
        a.scenario,
        speed=a.speed,
        duration=a.duration,
        seed=a.seed,
        settle_warmup=True,
        start_s=start_s,
        align_end_s=duration_s,
        workdir=a.workdir,
    )
    print("CPI² demo: CPI values come from the fleet simulator (this machine has no hardware counters).")
    print(
        "The simulated warm-up starts at %s; the %s of events then play at %gx and end about when this demo does."
        % (timerange.iso(start_s * 1_000_000), a.duration or "%gh" % (duration_s / 3600), a.speed)
    )
    t0 = time.time()
    run.start()
    last = [0.0]

    def progress(r):
        if time.time() - last[0] >= 5:
            last[0] = time.time()
            line = r.sim_progress()
            sim = line.split(" sim ", 1)[1].split(":", 3)[:3] if " sim " in line else ["?"]
            rate = line.split("samples, ", 1)[1].split(" samples/s")[0] if "samples/s" in line else "?"
            print("[sim %s] %s samples/s | %s" % (":".join(sim)[:19], rate, r.monitor.summary_line()), flush=True)

    try:
        run.wait(3 * 3600, progress=progress)
        return explore(run, a, t0, before_stop)
    finally:
        run.stop()


def explore(run, a, t0, before_stop):
    """What the demo shows once the scenario has played (the enforcer still running)."""
    m = run.monitor
    q = quality.measure(run.truth(), m)
    summary(run, m, q)
    truth = run.truth()[0]
    window = (truth["warmup_end_us"] - 1_800_000_000, truth["end_us"] + 300_000_000)
    candidates = capped_incidents(m)
    result = {"dir": run.dir, "window": window, "summary": q}
    inc = record = png = None
    if candidates:
        wait_for_rows(candidates[0], truth["end_us"])
        a_iso, b_iso = (timerange.iso(x) for x in window)
        show(
            "the latest incidents that named an antagonist",
            ["incidents", "--from", a_iso, "--to", b_iso, "--decision", "THROTTLE", "--limit", "5"],
        )
        show(
            "the most aggressive antagonists of %s" % candidates[0]["victim_job"],
            [
                "query",
                "top-antagonists",
                "--job",
                candidates[0]["victim_job"],
                "--from",
                a_iso,
                "--to",
                b_iso,
                "--limit",
                "5",
            ],
        )
        inc, png, record = plot(run, candidates)
        if inc:
            print(
                "\nmost severe incident that was capped: %s on %s, victim %s (CPI %.2f vs spec mean %.2f), antagonist %s"
                % (
                    inc["incident_id"],
                    inc["host"],
                    inc["victim_task"],
                    inc["victim_cpi"],
                    inc["spec_mean"],
                    record["antagonist_plotted"],
                )
            )
            print(
                "its plot (victim CPI against the antagonist's CPU usage, %d cap interval(s) shaded): %s"
                % (len(record["cap_intervals_us"]), png)
            )
    else:
        print("\nno incident was capped in this run: no plot")
    path, counts, titles = write_report(run, window, inc)
    print(
        "\nHTML report, every Grafana dashboard panel over this run (%d of %d panels with data): file://%s"
        % (counts["data"], sum(counts.values()), path)
    )
    if titles["empty"] or titles["error"]:
        print("  no data in this run: %s" % "; ".join(titles["empty"]))
        if any("(Telegraf)" in t for t in titles["empty"]):
            print(
                "  (Telegraf measures real hosts, not the simulated ones the host view shows; make demo does not build it)"
            )
    for t in titles["error"]:
        print("  FAILED: %s" % t)
    cmds = explore_commands(window, inc, record, m, png)
    print("\nExplore this run (each command below was run now; its rows in brackets):")
    for c, n in cmds:
        print("  cpi2ctl %s    [%s]" % (shlex.join(c), "failed" if n < 0 else "%d rows" % n))
    print("  (-o json or -o yaml for machine-readable output; --help on every command)")
    print("\nFlink web UI: %s   ClickHouse: %s" % (stack.FLINK, stack.CLICKHOUSE))
    print("Work dir (ground truth, logs, plot, report): %s" % run.dir)
    print("The stack stays up: make status, make logs, make down. The demo took %.0f s;" % (time.time() - t0))
    print("its enforcer stops now, lifting the caps it holds (cpi2ctl caps --at TIME shows them later).")
    result.update(incident=inc, png=png, plot=record, report=path, panels=counts, panel_titles=titles, commands=cmds)
    result["cap_at_us"] = cap_at_us(m, inc) if inc else None
    # the caps the enforcer holds as the run ends (the monitor's view of its actions)
    result["caps_held"] = {k: v for k, v in m.caps.items() if v > timerange.now_us()}
    if before_stop:
        before_stop(result)
    return result


if __name__ == "__main__":
    r = main()
    sys.exit(0 if r["incident"] else 1)
