"""make demo: the whole system on a simulated fleet, with a progress line while it runs and a
summary at the end. The stack stays up afterwards for exploration (make down stops it).

  demo.py [--scenario fleet300] [--speed 120] [--duration 4h]
"""

import argparse
import collections
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pipeline  # noqa: E402
from pipeline import ROOT, stack  # noqa: E402


def truth_matches(truth, incident):
    """Is the incident's named antagonist a real one for its host at that (simulated) time?"""
    for t in truth:
        if (t["type"] == "antagonism" and t["host"] == incident["host"] and t["antagonist"] == incident["antagonist_task"]
                and t["start_us"] <= incident["detected_at_us"] <= t["end_us"] + 600_000_000):
            return True
    return False


def detection_latencies(truth, actions):
    """(host, antagonist) -> simulated seconds from its onset (ground truth) to the first cap on it."""
    onset = {}
    for t in truth:
        if t["type"] == "antagonism":
            key = (t["host"], t["antagonist"])
            onset[key] = min(onset.get(key, t["start_us"]), t["start_us"])
    out = {}
    for a in actions:
        key = (a["host"], a["task"])
        if a["kind"] == "APPLIED" and key in onset and a["at_us"] >= onset[key]:
            out[key] = min(out.get(key, float("inf")), (a["at_us"] - onset[key]) / 1e6)
    return out


def summary(run):
    m = run.monitor
    truth = run.truth()
    throttles = [i for i in m.incidents if i["decision"] == "THROTTLE"]
    correct = [i for i in throttles if truth_matches(truth, i)]
    real = {(t["host"], t["antagonist"]) for t in truth if t["type"] == "antagonism"}
    found = {(i["host"], i["antagonist_task"]) for i in correct}
    kinds = m.action_kinds()
    rel = [o["relative_cpi"] for o in m.outcomes]
    classes = {i["incident_id"]: i["antagonist_class"] for i in m.incidents}
    ls_capped = [a for a in m.actions if a["kind"] == "APPLIED" and classes.get(a.get("incident_id")) == "LATENCY_SENSITIVE"]
    latencies = detection_latencies(truth, m.actions)
    print()
    print("==== CPI² demo summary (%s) ====" % run.scenario)
    print("incidents: %d; by decision: %s" % (len(m.incidents), dict(m.decisions())))
    print("antagonists named (THROTTLE incidents): %d, of them right per the ground truth: %d (precision %.2f)"
          % (len(throttles), len(correct), len(correct) / len(throttles) if throttles else float("nan")))
    print("real antagonists in the ground truth: %d, found: %d (recall %.2f)"
          % (len(real), len(found), len(found) / len(real) if real else float("nan")))
    print("caps applied %d, renewed %d, lifted %d, refused %d, failed %d; in force now %d"
          % (kinds.get("APPLIED", 0), kinds.get("RENEWED", 0), kinds.get("RELEASED", 0), kinds.get("REFUSED", 0),
             kinds.get("FAILED", 0), len(m.caps)))
    print("outcomes: %s; median relative victim CPI while capped: %s"
          % (dict(m.verdicts()), "%.2f" % statistics.median(rel) if rel else "n/a"))
    print("dead letters: %d" % len(m.dead_letters))
    if latencies:
        print("detection latency, antagonist onset to its first cap (simulated s): median %.0f, max %.0f over %d of %d"
              " antagonists (target: 3 sampling periods + 5 s = 185 s)"
              % (statistics.median(latencies.values()), max(latencies.values()), len(latencies), len(real)))
    if ls_capped:
        print("WARNING: %d caps on latency-sensitive tasks" % len(ls_capped))
    forensics = os.path.join(ROOT, "clickhouse", "forensics.py")
    if os.path.exists(forensics) and throttles:
        worst = max(throttles, key=lambda i: i["victim_cpi"] / max(i["spec_mean"], 1e-9))
        print("\nmost severe incident: %s on %s, victim %s (CPI %.2f vs spec %.2f), antagonist %s"
              % (worst["incident_id"], worst["host"], worst["victim_task"], worst["victim_cpi"], worst["spec_mean"],
                 worst["antagonist_task"]))
        t0 = min(i["detected_at_us"] for i in m.incidents) - 3600_000_000
        t1 = max(i["detected_at_us"] for i in m.incidents) + 3600_000_000
        queries = [("top_antagonists", ["job=" + worst["victim_job"], "from_us=%d" % t0, "to_us=%d" % t1]),
                   ("victim_incidents", ["victim_task=" + worst["victim_task"],
                                         "from_us=%d" % t0, "to_us=%d" % t1])]
        for name, params in queries:
            print("\n-- forensics query %s %s --" % (name, " ".join(params)))
            subprocess.run([os.path.join(ROOT, ".venv", "bin", "python"), forensics, "--url", stack.CLICKHOUSE,
                            name] + params, check=False)
    print("\nFlink web UI: %s" % stack.FLINK)
    print("ClickHouse:   curl '%s/?query=SELECT+decision,count()+FROM+cpi2.incidents+FINAL+GROUP+BY+decision'"
          % stack.CLICKHOUSE)
    print("Work dir (ground truth, logs): %s" % run.dir)
    print("The stack stays up: make status, make logs, make down.")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", default="fleet300")
    p.add_argument("--speed", type=float, default=120, help="simulated seconds per second after the warmup")
    p.add_argument("--duration", default=None, help="simulated duration after the warmup (default: the scenario's)")
    a = p.parse_args(argv)
    run = pipeline.Run(a.scenario, speed=a.speed, duration=a.duration)
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
