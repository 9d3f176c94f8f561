"""NUMA in the simulated fleet end to end (issue 22): cpi2-fleetsim's numa-fleet scenario (memory of
some websearch tasks moved to the other node for an hour) into the local ClickHouse, then the
forensics queries of seed 004's figures: websearch's mean CPI falls as its NUMA score rises, and
the fleet's tasks fall in the score buckets the scenario predicts."""

import json
import os
import subprocess

import pytest

from cpi2.clickhouse import forensics, schema
from cpi2.e2e import replay
from cpi2.numa import advise_demo
from cpi2.testing import fixtures


def test_cpi_against_numa_score_from_the_fleet(ch):
    if not os.path.exists(replay.FLEETSIM):
        pytest.fail("no %s: make -C collectors build" % replay.FLEETSIM)
    scenario = str(advise_demo.SCENARIOS / "numa-fleet.scn")
    out = subprocess.run(
        [replay.FLEETSIM, "-s", scenario, "--stdout", "--speed", "max", "--truth", "none", "--seed", "3"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = [line for line in out.splitlines() if line.startswith("{")]
    rows = [json.loads(line) for line in lines]
    assert len(rows) == 30 * 120 and all(r["numa_score"] is not None for r in rows)
    db = "cpi2_numa_fleet_%d" % os.getpid()
    try:
        schema.apply(ch, db, log=lambda *_: None)
        for r in rows:
            r["is_protected"] = int(r["is_protected"])
        fixtures.insert_rows(ch, db, "samples", [json.dumps(r) for r in rows])
        window = {
            "from_us": min(r["window_start_us"] for r in rows),
            "to_us": max(r["window_start_us"] for r in rows) + 1,
        }
        cols, got = forensics.run("cpi_vs_numa_score", dict(window, job="websearch"), database=db, ch=ch)
        by = {r[cols.index("numa_bucket")]: r for r in got}
        # 10/21 = 0.476 (memory away), 0.738 (half of it), 1 (home, or threads followed it)
        assert sorted(by) == [0.4, 0.7, 1.0], got
        cpi = [by[b][cols.index("mean_cpi")] for b in (0.4, 0.7, 1.0)]
        assert cpi[0] > cpi[1] > cpi[2], cpi
        # numa_penalty 0.3: x (1 + 0.3 x 0.524) = 1.157 at 0.476, 1.079 at 0.738
        assert 1.10 < cpi[0] / cpi[2] < 1.22 and 1.03 < cpi[1] / cpi[2] < 1.13, cpi
        assert [by[b][cols.index("samples")] for b in (0.4, 0.7, 1.0)] == [360, 240, 1800]
        cols, got = forensics.run("numa_score_distribution", window, database=db, ch=ch)
        # mean over the 2 h: 6 tasks (1 + 0.476) / 2 = 0.738, 4 tasks 0.869, 20 tasks 1
        assert [tuple(r) for r in got] == [(0.7, 6, 0.2), (0.8, 4, 0.1333), (1.0, 20, 0.6667)], got
    finally:
        ch.query("DROP DATABASE IF EXISTS %s" % db)
