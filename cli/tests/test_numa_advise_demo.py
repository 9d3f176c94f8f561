"""Placement advice on a fleet (issue 22, python -m cpi2.numa.advise_demo): on advise-mixed.scn the
advice names the two interfering job pairs of the ground truth first; advise-apart.scn, the same
fleet with those pairs on separate machines, has fewer THROTTLE incidents of their victims and a
lower victim CPI. Both through cpi2-fleetsim and the whole Flink job (cpi2.e2e.replay), stored in
the local ClickHouse. CPI2_REPLAY_JOBS names another flink-jobs folder to detect with (default
this checkout's)."""

import os
import shutil

import pytest

from cpi2.e2e import replay
from cpi2.numa import advise_demo


def test_advice_names_the_interfering_pairs_and_separating_them_helps(ch, tmp_path):
    if not os.path.exists(replay.FLEETSIM):
        pytest.fail("no %s: make -C collectors build" % replay.FLEETSIM)
    if not shutil.which("java"):
        pytest.fail("no java on the PATH (the detection job runs in a MiniCluster)")
    db = "cpi2_advise_test_%d" % os.getpid()
    try:
        r = advise_demo.demo(ch, db, str(tmp_path), seed=1, jobs=os.environ.get("CPI2_REPLAY_JOBS", replay.JOBS))
        mixed, apart = r["mixed"], r["apart"]
        assert mixed["truth_pairs"] == [("bigtable", "mapreduce"), ("websearch", "video")]
        assert r["named_first"], mixed["advised"]
        assert mixed["victim_throttles"] >= 4, mixed
        assert apart["victim_throttles"] < mixed["victim_throttles"] / 2, (mixed, apart)
        assert apart["victim_mean_cpi"] < 0.8 * mixed["victim_mean_cpi"], (mixed, apart)
        assert not any(p[:2] in mixed["truth_pairs"] for p in apart["advised"]), apart["advised"]
    finally:
        for suffix in ("_mixed", "_apart"):
            ch.query("DROP DATABASE IF EXISTS %s%s" % (db, suffix))
