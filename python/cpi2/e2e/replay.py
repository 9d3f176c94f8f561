"""Replays a scenario through the job's detection alone and scores it against the ground truth.

cpi2-fleetsim writes the scenario's samples (warm-up included) as JSON lines, the whole Flink job
runs over them in a local MiniCluster (flink-jobs' ScenarioReplay: no Kafka, no enforcer, so no
cap changes what follows), and quality.py compares the THROTTLE incidents with the truth. A
minute or two for fleet300; for working on detection without the stack. The end-to-end figures,
with caps in the loop, come from bench_detection.py.

  replay.py SCENARIO [--seed N] [--keep DIR] [-- job options, e.g. --correlation.threshold 0.3]
"""

import argparse
import collections
import json
import os
import subprocess
import tempfile

from cpi2 import repo
from cpi2.e2e import quality

ROOT = str(repo.ROOT)
FLEETSIM = os.path.join(ROOT, "build", "c", "collectors", "fleetsim", "cpi2-fleetsim")
JOBS = os.path.join(ROOT, "flink-jobs")


class Decisions:
    """What quality.measure reads of a monitor: the incidents, and no actions (no enforcer)."""

    def __init__(self, incidents):
        self.incidents = incidents
        self.actions = []


def replay(scenario, seed, workdir, job_args, jobs=JOBS):
    """(truth rows, incidents) of the scenario's detection; jobs: the flink-jobs folder whose
    classes run it (another checkout's, to replay a fixed version while this one changes)."""
    samples, truth, out = (os.path.join(workdir, f) for f in ("samples.jsonl", "truth.jsonl", "incidents.jsonl"))
    with open(samples, "w") as f:
        subprocess.run(
            [
                FLEETSIM,
                "-s",
                scenario,
                "--stdout",
                "--speed",
                "max",
                "--seed",
                str(seed),
                "--truth",
                truth,
                "--progress",
                "3600",
            ],
            stdout=f,
            check=True,
        )
    cp_file = os.path.join(jobs, "target", "bench.classpath")
    subprocess.run(["make", "-s", "-C", jobs, "classpath"], check=True)
    cp = ":".join(
        [
            os.path.join(jobs, "target", "test-classes"),
            os.path.join(jobs, "target", "classes"),
            open(cp_file).read().strip(),
        ]
    )
    r = subprocess.run(
        ["java", "-Xmx3g", "-cp", cp, "org.cpi2.flink.bench.ScenarioReplay", samples, out] + job_args,
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise SystemExit("replay failed:\n" + r.stdout[-3000:] + r.stderr[-3000:])
    print([line for line in r.stdout.splitlines() if line.startswith("replayed")][-1])
    truth_rows = [json.loads(line) for line in open(truth)]
    incidents = [json.loads(line) for line in open(out)]
    return truth_rows, incidents


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", help="work in this folder and keep its files")
    ap.add_argument("job_args", nargs="*", help="job options after --")
    a = ap.parse_args()
    workdir = a.keep or tempfile.mkdtemp(prefix="cpi2-replay-")
    os.makedirs(workdir, exist_ok=True)
    truth, incidents = replay(a.scenario, a.seed, workdir, a.job_args)
    q = quality.measure(truth, Decisions(incidents))
    print(
        "%s (seed %d, no caps in the loop): %d incidents %s"
        % (a.scenario, a.seed, len(incidents), dict(collections.Counter(i["decision"] for i in incidents)))
    )
    print(
        "  THROTTLE %d, right %d, precision %s; antagonists found %d of %d, recall %s; event-time latency median %s s"
        % (
            q["throttles"],
            q["correct"],
            quality.fmt(q["precision"]),
            q["found"],
            q["real"],
            quality.fmt(q["recall"]),
            quality.fmt(q["event_latency_median"], "%.0f"),
        )
    )
    for host, antagonist in q["missed"]:
        print("  missed: %s on %s" % (antagonist, host))
    wrong = [i for i in incidents if i["decision"] == "THROTTLE" and not quality.truth_matches(truth, i)]
    for i in wrong[:10]:
        print(
            "  wrong: %s named for %s on %s at %d"
            % (i["antagonist_task"], i["victim_task"], i["host"], i["detected_at_us"])
        )
    if not a.keep:
        for f in os.listdir(workdir):
            os.remove(os.path.join(workdir, f))
        os.rmdir(workdir)


if __name__ == "__main__":
    main()
