"""Placement advice shown on a fleet (issue 22): scenarios/advise-mixed.scn, where video's bursts
hurt websearch and mapreduce's hurt bigtable on shared machines, replayed through the detection
job (cpi2.e2e.replay: cpi2-fleetsim's samples, the whole Flink job in a MiniCluster, no caps in
the loop); its samples and incidents go into a ClickHouse database, and cpi2ctl advise's query
ranks the job pairs. Then scenarios/advise-apart.scn, the same fleet and bursts with the advised
pairs on separate machines, replayed the same way: incidents and the victims' CPI before and after.

  python -m cpi2.numa.advise_demo [--seed 1] [--jobs FLINK_JOBS_DIR] [--keep DIR]"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from cpi2 import repo
from cpi2.clickhouse import schema
from cpi2.e2e import replay
from cpi2.numa import advise
from cpi2.testing import fixtures

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
VICTIM_JOBS = ("websearch", "bigtable")
# the victims' tasks that share machines with the bursting tasks in advise-mixed
VICTIM_TASKS = ("jobs/websearch/0", "jobs/websearch/1", "jobs/bigtable/0", "jobs/bigtable/1")


def _rows(path, drop=(), booleans=()):
    out = []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            for k in drop:
                r.pop(k, None)
            for k in booleans:
                r[k] = int(bool(r.get(k)))
            out.append(json.dumps(r, separators=(",", ":")))
    return out


def truth_pairs(truth):
    """(victim job, antagonist job) of every antagonism of a latency-sensitive victim."""
    return sorted(
        {
            (t["victim_job"], t["antagonist_job"])
            for t in truth
            if t.get("type") == "antagonism" and t.get("victim_class") in ("latency-sensitive", "LATENCY_SENSITIVE")
        }
    )


def play(name, ch, db, workdir, seed=1, jobs=replay.JOBS):
    """Replay one scenario into database db; its measured figures and advice."""
    wd = os.path.join(workdir, name)
    os.makedirs(wd, exist_ok=True)
    truth, _ = replay.replay(str(SCENARIOS / ("%s.scn" % name)), seed, wd, [], jobs=jobs)
    ch.query("DROP DATABASE IF EXISTS %s" % db)
    schema.apply(ch, db, log=lambda *_: None)
    fixtures.insert_rows(ch, db, "samples", _rows(os.path.join(wd, "samples.jsonl"), booleans=("is_protected",)))
    incidents = _rows(os.path.join(wd, "incidents.jsonl"), drop=("suspects",), booleans=("victim_protected",))
    if incidents:
        fixtures.insert_rows(ch, db, "incidents", incidents)
    head = next(t for t in truth if t.get("type") == "scenario")
    start, end = head["warmup_end_us"], head["end_us"]
    rows = advise.pairs(start, end + 1, ch=ch, database=db)
    victims = ", ".join("'%s'" % j for j in VICTIM_JOBS)
    tasks = ", ".join("'%s'" % t for t in VICTIM_TASKS)
    throttles, victim_throttles = (
        int(x)
        for x in ch.query(
            "SELECT count(), sum(victim_job IN (%s)) FROM %s.incidents FINAL WHERE decision = 'THROTTLE'"
            " AND detected_at_us >= %d" % (victims, db, start)
        )
        .strip()
        .split("\t")
    )
    cpi = ch.query(
        "SELECT avg(cpi) FROM %s.samples WHERE task IN (%s) AND cpi IS NOT NULL AND window_start_us >= %d"
        " AND window_start_us < %d" % (db, tasks, start, end)
    ).strip()
    return {
        "scenario": name,
        "truth_pairs": truth_pairs(truth),
        "advised": [(r["victim_job"], r["antagonist_job"], r["score"], r["incidents"]) for r in advise.advised(rows)],
        "throttles": throttles,
        "victim_throttles": victim_throttles,
        "victim_mean_cpi": float(cpi),
    }


def demo(ch, database, workdir, seed=1, jobs=replay.JOBS):
    """Both scenarios: {"mixed": ..., "apart": ...} and whether the advice named the interfering
    pairs first."""
    mixed = play("advise-mixed", ch, database + "_mixed", workdir, seed, jobs)
    apart = play("advise-apart", ch, database + "_apart", workdir, seed, jobs)
    n = len(mixed["truth_pairs"])
    named_first = n > 0 and sorted((v, a) for v, a, _, _ in mixed["advised"][:n]) == mixed["truth_pairs"]
    return {"mixed": mixed, "apart": apart, "named_first": named_first}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m cpi2.numa.advise_demo", description=__doc__)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--jobs", default=replay.JOBS, help="flink-jobs folder whose classes detect (default this checkout's)"
    )
    ap.add_argument("--keep", help="work in this folder and keep its files")
    ap.add_argument("--database", default="cpi2_advise_demo", help="ClickHouse databases DATABASE_mixed and _apart")
    a = ap.parse_args(argv)
    ch = fixtures.clickhouse()
    workdir = a.keep or tempfile.mkdtemp(prefix="cpi2-advise-")
    r = demo(ch, a.database, workdir, a.seed, a.jobs)
    for key in ("mixed", "apart"):
        m = r[key]
        print("%s (seed %d, no caps in the loop):" % (m["scenario"], a.seed))
        print("  THROTTLE incidents %d, of websearch or bigtable %d; mean CPI of %s: %.3f"
              % (m["throttles"], m["victim_throttles"], ", ".join(VICTIM_TASKS), m["victim_mean_cpi"]))  # fmt: skip
        for v, an, score, inc in m["advised"][:5]:
            print("  advice: keep %s and %s apart (score %s, %d incidents)" % (v, an, score, inc))
    print("interfering pairs (truth) %s named first: %s" % (r["mixed"]["truth_pairs"], r["named_first"]))
    print("ClickHouse databases %s_mixed and %s_apart on %s" % (a.database, a.database, repo.default_clickhouse_url()))
    return 0 if r["named_first"] else 1


if __name__ == "__main__":
    sys.exit(main())
