"""make demo: the whole system on a simulated fleet, with a progress line while it runs and a
summary at the end. The stack stays up afterwards for exploration (make down stops it).

  demo.py [--scenario fleet300] [--speed 120] [--duration 4h]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

from cpi2.e2e import pipeline, quality
from cpi2.e2e.pipeline import ROOT, stack


def summary(run):
    m = run.monitor
    truth = run.truth()
    throttles = [i for i in m.incidents if i["decision"] == "THROTTLE"]
    q = quality.measure(truth, m)
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
        "caps applied %d, renewed %d, lifted %d, refused %d, failed %d; in force now %d"
        % (
            kinds.get("APPLIED", 0),
            kinds.get("RENEWED", 0),
            kinds.get("RELEASED", 0),
            kinds.get("REFUSED", 0),
            kinds.get("FAILED", 0),
            len(m.caps),
        )
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
    if throttles:
        worst = max(throttles, key=lambda i: i["victim_cpi"] / max(i["spec_mean"], 1e-9))
        print(
            "\nmost severe incident: %s on %s, victim %s (CPI %.2f vs spec %.2f), antagonist %s"
            % (
                worst["incident_id"],
                worst["host"],
                worst["victim_task"],
                worst["victim_cpi"],
                worst["spec_mean"],
                worst["antagonist_task"],
            )
        )
        try:  # the ClickHouse sinks write in batches: wait (bounded) for this incident's rows
            stack.wait_until(
                lambda: (
                    stack.query(
                        "SELECT (SELECT count() FROM cpi2.incidents WHERE incident_id = '{0}') * "
                        "(SELECT count() FROM cpi2.incident_suspects WHERE incident_id = '{0}')".format(
                            worst["incident_id"]
                        )
                    )
                    != "0"
                ),
                120,
                "the incident's rows in ClickHouse",
                2,
            )
        except AssertionError as e:
            print("(%s: the queries below may miss it)" % e)
        t0 = min(i["detected_at_us"] for i in m.incidents) - 3600_000_000
        t1 = max(i["detected_at_us"] for i in m.incidents) + 3600_000_000
        queries = [
            ("top_antagonists", ["job=" + worst["victim_job"], "from_us=%d" % t0, "to_us=%d" % t1]),
            ("victim_incidents", ["victim_task=" + worst["victim_task"], "from_us=%d" % t0, "to_us=%d" % t1]),
        ]
        for name, params in queries:
            print("\n-- forensics query %s %s --" % (name, " ".join(params)))
            subprocess.run(
                [sys.executable, "-m", "cpi2.clickhouse.forensics", "--url", stack.CLICKHOUSE, name] + params,
                check=False,
            )
        png = os.path.join(run.dir, "most-severe-incident.png")
        r = subprocess.run(
            [os.path.join(ROOT, "cli", "bin", "cpi2ctl"), "incident", "show", worst["incident_id"], "-o", png],
            capture_output=True,
            text=True,
        )
        print(
            "\nplot of the most severe incident (victim CPI against the antagonist's CPU usage, caps shaded): %s"
            % (png if r.returncode == 0 else "not written: " + (r.stderr or r.stdout).strip()[-500:])
        )
    print("\nFlink web UI: %s" % stack.FLINK)
    print(
        "ClickHouse:   curl '%s/?query=SELECT+decision,count()+FROM+cpi2.incidents+FINAL+GROUP+BY+decision'"
        % stack.CLICKHOUSE
    )
    print("Work dir (ground truth, logs): %s" % run.dir)
    print("The stack stays up: make status, make logs, make down.")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", default="fleet300")
    p.add_argument("--speed", type=float, default=120, help="simulated seconds per second after the warmup")
    p.add_argument("--duration", default=None, help="simulated duration after the warmup (default: the scenario's)")
    a = p.parse_args(argv)
    run = pipeline.Run(a.scenario, speed=a.speed, duration=a.duration, settle_warmup=True)
    print("CPI² demo: CPI values come from the fleet simulator (this machine has no hardware counters).")
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
    finally:
        run.stop()
    summary(run)


if __name__ == "__main__":
    main()
