"""An upgrade in the middle of a scenario: once the pipeline has named and capped an antagonist
(paper case 2), the job is stopped with a savepoint and resumed from it while cpi2-fleetsim keeps
publishing. Detection must go on without relearning the specs (no SPEC_NOT_USABLE after the
resume), every incident must be published once (no duplicate on cpi2.incidents), and ClickHouse
must hold each incident once, in the raw table, not only after FINAL's deduplication."""

import pytest

from cpi2.e2e import pipeline
from cpi2.testing import stack

pytestmark = pytest.mark.usefixtures("stack_up")


def test_savepoint_in_the_middle_keeps_the_specs_and_writes_nothing_twice():
    run = pipeline.Run("case2", speed=60, duration="1h", seed=7)
    run.start()
    m = run.monitor
    try:
        assert run.poll_until(lambda m: any(i["decision"] == "THROTTLE" for i in m.incidents), 300), (
            "no THROTTLE before the upgrade: %s; logs in %s" % (dict(m.decisions()), run.dir)
        )
        before = len(m.incidents)
        run.restart_from_savepoint()
        run.wait(600, settle=20)
    finally:
        run.stop()
    after = m.incidents[before:]
    decisions = {}
    for i in after:
        decisions[i["decision"]] = decisions.get(i["decision"], 0) + 1
    why = "decisions after the resume %s; logs in %s" % (decisions, run.dir)
    assert "SPEC_NOT_USABLE" not in decisions, why
    assert [i for i in after if i["decision"] == "THROTTLE" and i["antagonist_task"] == "jobs/be-crawler/0"], why
    ids = [i["incident_id"] for i in m.incidents]
    assert len(ids) == len(set(ids)), "incidents published twice: %d of %d" % (len(ids) - len(set(ids)), len(ids))
    quoted = ",".join("'%s'" % i for i in set(ids))
    rows, distinct = map(
        int,
        stack.query(
            "SELECT count(), uniqExact(incident_id) FROM cpi2.incidents WHERE incident_id IN (%s)" % quoted
        ).split(),
    )
    assert distinct == len(set(ids)) and rows == distinct, "ClickHouse: %d rows, %d incidents, %d published" % (
        rows,
        distinct,
        len(set(ids)),
    )
    run.cleanup()
