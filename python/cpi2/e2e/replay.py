"""Replays scenarios through the job's detection alone and scores them against the ground truth.

cpi2-fleetsim writes a scenario's samples (warm-up included) as JSON lines, the whole Flink job
runs over them in a local MiniCluster (flink-jobs' ScenarioReplay: no Kafka, no enforcer, so no
cap changes what follows), and quality.py compares the THROTTLE incidents with the truth. A
minute or two for fleet300; for working on detection without the stack. The end-to-end figures,
with caps in the loop, come from bench_detection.py. Several scenarios, seeds and policies give a
line per run and the totals per policy.

  replay.py SCENARIO [SCENARIO ...] [--seeds 1,2,3] [--policies project,paper] [--keep DIR]
            [--jobs FLINK_JOBS_DIR] [-- job options, e.g. --correlation.threshold 0.3]
"""

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
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
    sample_path, truth = samples(scenario, seed, workdir)
    incidents = run_job(sample_path, os.path.join(workdir, "incidents.jsonl"), job_args, jobs)
    return [json.loads(x) for x in open(truth)], incidents


def samples(scenario, seed, workdir):
    """Writes the scenario's samples and truth into workdir: (samples path, truth path)."""
    path, truth = (os.path.join(workdir, f) for f in ("samples.jsonl", "truth.jsonl"))
    with open(path, "w") as f:
        subprocess.run(
            [FLEETSIM, "-s", scenario, "--stdout", "--speed", "max", "--seed", str(seed), "--truth", truth]
            + ["--progress", "36000"],
            stdout=f,
            stderr=subprocess.DEVNULL,
            check=True,
        )
    return path, truth


_BUILT = set()


def run_job(samples_path, out, job_args, jobs=JOBS):
    """The job over the samples in a MiniCluster: its incidents, also written to out."""
    cp_file = os.path.join(jobs, "target", "bench.classpath")
    if jobs not in _BUILT:  # once a process: the classes do not change under a run of runs
        subprocess.run(["make", "-s", "-C", jobs, "classpath"], check=True)
        _BUILT.add(jobs)
    cp = ":".join(
        [
            os.path.join(jobs, "target", "test-classes"),
            os.path.join(jobs, "target", "classes"),
            open(cp_file).read().strip(),
        ]
    )
    r = subprocess.run(
        ["java", "-Xmx3g", "-cp", cp, "org.cpi2.flink.bench.ScenarioReplay", samples_path, out] + job_args,
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise SystemExit("replay failed:\n" + r.stdout[-3000:] + r.stderr[-3000:])
    return [json.loads(line) for line in open(out)]


def line(name, seed, policy, q, incidents):
    decisions = collections.Counter(i["decision"] for i in incidents)
    return (
        "%-18s %4d %-8s THROTTLE %4d right %4d precision %-5s found %d/%d recall %-5s in shifts %d JOB_WIDE_SHIFT %d event p50 %s s  %s"
        % (
            name,
            seed,
            policy,
            q["throttles"],
            q["correct"],
            quality.fmt(q["precision"]),
            q["found"],
            q["real"],
            quality.fmt(q["recall"]),
            q["shift_throttles"],
            q["job_wide_shift"],
            quality.fmt(q["event_latency_median"], "%.0f"),
            " ".join("%s %d" % (d, n) for d, n in sorted(decisions.items()) if d != "THROTTLE"),
        )
    )


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter, epilog="job options follow --"
    )
    ap.add_argument("scenarios", nargs="+", help="scenario names or .scn files")
    ap.add_argument("--seed", type=int, help="one seed (default 1)")
    ap.add_argument("--seeds", help="comma-separated seeds")
    ap.add_argument("--policies", help="comma-separated correlation policies, each a run of its own")
    ap.add_argument("--keep", help="work in this folder and keep its files")
    ap.add_argument("--wrong", type=int, default=10, help="wrong THROTTLEs listed per run")
    ap.add_argument(
        "--jobs", default=JOBS, help="the flink-jobs folder whose classes run the job (another checkout's, to compare)"
    )
    argv = sys.argv[1:]
    job_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    a = ap.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    a.job_args = job_args
    seeds = [int(x) for x in a.seeds.split(",")] if a.seeds else [a.seed or 1]
    policies = a.policies.split(",") if a.policies else [None]
    workdir = a.keep or tempfile.mkdtemp(prefix="cpi2-replay-")
    os.makedirs(workdir, exist_ok=True)
    totals = collections.defaultdict(lambda: collections.Counter())
    for scenario in a.scenarios:
        name = os.path.basename(scenario).removesuffix(".scn")
        for seed in seeds:
            run_dir = os.path.join(workdir, "%s-%d" % (name, seed))
            os.makedirs(run_dir, exist_ok=True)
            sample_path, truth_path = samples(scenario, seed, run_dir)
            truth = [json.loads(x) for x in open(truth_path)]
            for policy in policies:
                args = a.job_args + (["--correlation.policy", policy] if policy else [])
                out = os.path.join(run_dir, "incidents%s.jsonl" % ("-" + policy if policy else ""))
                incidents = run_job(sample_path, out, args, a.jobs)
                q = quality.measure(truth, Decisions(incidents))
                print(line(name, seed, policy or "-", q, incidents), flush=True)
                for host, antagonist in q["missed"]:
                    print("    missed: %s on %s" % (antagonist, host))
                wrong = [i for i in incidents if i["decision"] == "THROTTLE" and not quality.truth_matches(truth, i)]
                for i in wrong[: a.wrong]:
                    print(
                        "    wrong: %s named for %s on %s at %+.0f s (correlation %.3f)"
                        % (
                            i["antagonist_task"],
                            i["victim_task"],
                            i["host"],
                            (i["detected_at_us"] - truth[0]["warmup_end_us"]) / 1e6,
                            i["correlation"],
                        )
                    )
                t = totals[policy or "-"]
                for k in ("throttles", "correct", "real", "found", "shift_throttles", "job_wide_shift"):
                    t[k] += q[k]
                t["runs"] += 1
                t["below_0.9"] += q["precision"] is not None and q["precision"] < 0.9
            os.remove(sample_path)
    for policy, t in totals.items():
        print(
            "total %s: %d runs, THROTTLE %d, precision %s, recall %s (%d of %d), runs with precision under 0.9: %d, THROTTLEs in shifts %d, JOB_WIDE_SHIFT %d"
            % (
                policy,
                t["runs"],
                t["throttles"],
                quality.fmt(t["correct"] / t["throttles"] if t["throttles"] else None),
                quality.fmt(t["found"] / t["real"] if t["real"] else None),
                t["found"],
                t["real"],
                t["below_0.9"],
                t["shift_throttles"],
                t["job_wide_shift"],
            )
        )
    if not a.keep:
        shutil.rmtree(workdir)


if __name__ == "__main__":
    main()
