"""End to end over the real local stack: cpi2-fleetsim → Kafka → the Flink job → incidents →
cpi2-enforcer writing cpu.max in the simulator's cgroup tree (simulated time) → actions →
outcomes → ClickHouse.

- A steady fleet with no interference produces no caps.
- A fleet with an antagonist (paper case 2's scenario) goes through every stage: a THROTTLE
  incident, a cap written to the named task's cgroup and lifted again, a judged outcome, and
  the rows in ClickHouse. (Whether the named antagonist is the right one is checked by the
  case-study tests of the detection-quality work, not here.)
"""

import os

import pytest

from cpi2.e2e import pipeline
from cpi2.testing import stack

pytestmark = pytest.mark.usefixtures("stack_up")


def test_steady_fleet_produces_no_caps():
    run = pipeline.Run("steady", speed=240, duration="2h", seed=11)
    run.start()
    try:
        run.wait(600, settle=15)
    finally:
        run.stop()
    m = run.monitor
    assert m.decisions().get("THROTTLE", 0) == 0, [i for i in m.incidents if i["decision"] == "THROTTLE"][:3]
    assert m.action_kinds().get("APPLIED", 0) == 0
    assert m.dead_letters == [] and m.undecodable == []
    truth = run.truth()
    assert not [t for t in truth if t["type"] == "antagonism"], "the steady scenario has no antagonists"
    run.cleanup()


def test_antagonist_goes_through_every_stage():
    run = pipeline.Run("case2", speed=240, duration="1h", seed=3)
    run.start()
    try:
        run.wait(600, settle=20)
    finally:
        run.stop()
    m = run.monitor
    throttles = [i for i in m.incidents if i["decision"] == "THROTTLE"]
    assert throttles, "no THROTTLE incident; decisions: %s; logs in %s" % (dict(m.decisions()), run.dir)
    applied = [a for a in m.actions if a["kind"] == "APPLIED"]
    released = [a for a in m.actions if a["kind"] == "RELEASED"]
    assert applied and released, "actions: %s" % dict(m.action_kinds())
    a = applied[0]
    assert a["incident_id"] in {i["incident_id"] for i in throttles}
    assert a["cap_cpu"] in (0.1, 0.01) and a["previous_limit"] == "max 100000"
    # the cap was lifted: the cgroup has its original limit again
    with open(os.path.join(run.cgroot, a["host"], a["task"], "cpu.max")) as f:
        assert f.read().strip() == "max 100000"
    # the simulator saw the cap (ground truth records cap lines as it sees cap files change)
    assert any(t["type"] == "cap" and t["task"] == a["task"] for t in run.truth())
    assert m.outcomes, "no outcome was judged"
    assert {o["verdict"] for o in m.outcomes} <= {"TRUE_POSITIVE", "FALSE_POSITIVE", "NOISE", "INCONCLUSIVE"}
    # ClickHouse has the incident and the action (the Flink sink writes them; FINAL dedups)
    iid = a["incident_id"]
    assert stack.query("SELECT count() FROM cpi2.incidents FINAL WHERE incident_id = '%s'" % iid) == "1"
    assert int(stack.query("SELECT count() FROM cpi2.actions FINAL WHERE incident_id = '%s'" % iid)) >= 1
    assert int(stack.query("SELECT count() FROM cpi2.incident_suspects WHERE incident_id = '%s'" % iid)) >= 1
    run.cleanup()
