"""ClickHouse stopped while samples flow: detection goes on, the loader catches up afterwards.

The detection job reads and writes Kafka only; the loader, a Flink job of its own, stores every
topic in ClickHouse. With ClickHouse killed before a case-2 scenario plays, the detection job
still takes in every sample within seconds and the enforcer still caps the antagonist. With
ClickHouse back, the loader (restarting until it answers) stores every sample and every
incident of the run once: as many distinct rows as were produced, and no row twice under FINAL.
"""

import random
import time

import pytest
import requests

from cpi2.e2e import pipeline
from cpi2.testing import stack

pytestmark = pytest.mark.usefixtures("stack_up")

# After the simulator's last sample, the detection job has taken in every sample within this:
# ClickHouse being down must not hold detection back.
CAUGHT_UP_S = 10


def loader_job():
    jobs = requests.get(stack.FLINK + "/jobs/overview", timeout=10).json()["jobs"]
    return next(
        (j for j in jobs if j["name"] == "cpi2-loader" and j["state"] not in ("CANCELED", "FAILED", "FINISHED")), None
    )


def test_detection_caps_while_clickhouse_is_down_and_the_loader_catches_up():
    # A simulated time of its own, so that no other run's samples share its span in ClickHouse.
    start = (int(time.time()) // 60 + 800 * 24 * 60 + random.randrange(10**6)) * 60
    run = pipeline.Run("case2", speed=240, duration="1h", seed=3, fleetsim_args=["--start", str(start)])
    run.start()
    try:
        assert loader_job(), "no loader job beside the detection job"
        stack.kill_server("clickhouse")
        down_at = time.time()
        pipeline.log("clickhouse killed")
        run.wait(600, settle=0)
        n = run.published()
        t0 = time.time()
        stack.wait_until(
            lambda: pipeline.samples_read(run.job)[0] >= n,
            CAUGHT_UP_S,
            "the detection job to take in the %d samples published while ClickHouse is down" % n,
            interval=0.2,
        )
        pipeline.log("detection took in all %d samples %.1f s after the simulator ended" % (n, time.time() - t0))
        run.poll_until(lambda m: [a for a in m.actions if a["kind"] == "APPLIED"], 20)
        m = run.monitor
        applied = [a for a in m.actions if a["kind"] == "APPLIED"]
        assert applied, "no cap while ClickHouse is down; decisions %s; logs in %s" % (dict(m.decisions()), run.dir)
        with pytest.raises(requests.ConnectionError):
            requests.get(stack.CLICKHOUSE + "/ping", timeout=5)  # still down: the caps above did not need it
        stack.ensure_up()
        pipeline.log("clickhouse back after %.0f s" % (time.time() - down_at))
    finally:
        run.stop()

    def landed():
        rows, distinct = run.stored_samples()
        return distinct >= n and (rows, distinct)

    rows, distinct = stack.wait_until(landed, 180, "the loader to store the run's %d samples" % n, interval=2)
    assert distinct == n, "ClickHouse holds %d distinct samples of this run, the simulator published %d" % (distinct, n)
    assert run.stored_samples_final() == n
    ids = {i["incident_id"] for i in m.incidents}
    quoted = ",".join("'%s'" % i for i in ids)
    stack.wait_until(
        lambda: (
            int(stack.query("SELECT uniqExact(incident_id) FROM cpi2.incidents WHERE incident_id IN (%s)" % quoted))
            == len(ids)
        ),
        60,
        "the run's %d incidents in ClickHouse" % len(ids),
    )
    assert int(stack.query("SELECT count() FROM cpi2.incidents FINAL WHERE incident_id IN (%s)" % quoted)) == len(ids)
    actions = {a["action_id"] for a in m.actions}
    quoted = ",".join("'%s'" % a for a in actions)
    stack.wait_until(
        lambda: (
            int(stack.query("SELECT count() FROM cpi2.actions FINAL WHERE action_id IN (%s)" % quoted)) == len(actions)
        ),
        60,
        "the run's %d actions in ClickHouse" % len(actions),
    )
    pipeline.log(
        "after the outage: %d samples (%d rows before merging), %d incidents, %d actions in ClickHouse"
        % (distinct, rows, len(ids), len(actions))
    )
    run.cleanup()
