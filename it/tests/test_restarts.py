"""Crashes in the middle of a scenario (issue 7): Kafka, then ClickHouse, killed with SIGKILL
while cpi2-fleetsim publishes, come back with `make up`; every sample the simulator had
acknowledged (Kafka delivery reports, exit code 0) must reach ClickHouse exactly once. An
enforcer killed with SIGKILL while a cap is in force, then restarted on its state folder, must
leave no cap behind.

The data-loss runs play the steady fleet (60 hosts, about 230 tasks) from a random start time
some years ahead, so that the rows of this run are the only ones in their time range."""

import os
import random
import time

import pytest
import requests

from cpi2.e2e import pipeline
from cpi2.testing import stack

pytestmark = pytest.mark.usefixtures("stack_up")


def crash_and_count(server):
    # The simulator may end its play while the server is still down (Kafka recovers every log
    # after a SIGKILL: seconds on a fresh stack, most of a minute with gigabytes of topics): it
    # waits up to 5 minutes for Kafka to take the rest, so every sample it produced counts.
    start = (int(time.time()) // 60 + 800 * 24 * 60 + random.randrange(10**6)) * 60
    run = pipeline.Run(
        "steady",
        speed=120,
        duration="2h",
        warmup="0",
        seed=5,
        fleetsim_args=["--start", str(start), "--flush-timeout", "300"],
    )
    run.start()
    try:
        stack.wait_until(
            lambda: "kafka delivered" in open(run.sim_log.name).read() or not run.running(),
            60,
            "the simulator's first deliveries",
        )
        time.sleep(10)
        assert run.running(), "the scenario ended before the crash; logs in %s" % run.dir
        stack.kill_server(server)
        pipeline.log("%s killed with SIGKILL at %s" % (server, run.sim_progress()))
        time.sleep(10)
        stack.ensure_up()
        pipeline.log("%s back" % server)
        run.wait(600, settle=0)
    finally:
        run.stop()
    n = run.published()
    assert n > 20000, "too few samples to say anything: %d" % n

    def landed():
        rows, distinct = run.stored_samples()
        return distinct >= n and (rows, distinct)

    try:
        rows, distinct = stack.wait_until(landed, 240, "%d samples in ClickHouse" % n, interval=5)
    except AssertionError as e:
        jobs = requests.get(stack.FLINK + "/jobs/overview", timeout=10).json()["jobs"]
        raise AssertionError(
            "%s; job states %s; logs in %s" % (e, [(j["jid"], j["state"]) for j in jobs], run.dir)
        ) from e
    assert distinct == n, "ClickHouse holds %d distinct samples of this run, the simulator published %d" % (distinct, n)
    assert run.stored_samples_final() == n
    pipeline.log(
        "%s crash: %d samples published and acknowledged, %d in ClickHouse (%d rows before merging)"
        % (server, n, distinct, rows)
    )
    run.cleanup()


def test_kafka_crash_loses_no_acknowledged_sample():
    crash_and_count("kafka")


def test_clickhouse_crash_loses_no_sample():
    crash_and_count("clickhouse")


def test_enforcer_kill_9_with_a_cap_in_force_leaves_no_cap_behind():
    run = pipeline.Run("case2", speed=60, duration="40m", seed=7)
    run.start()
    m = run.monitor
    try:
        applied = run.poll_until(lambda m: [a for a in m.actions if a["kind"] == "APPLIED"], 300)
        assert applied, "no cap before the scenario ended: %s; logs in %s" % (dict(m.action_kinds()), run.dir)
        a = applied[0]
        cap_file = os.path.join(run.cgroot, a["host"], a["task"], "cpu.max")
        run.kill_enforcer()
        held = open(cap_file).read().strip()
        assert held != "max 100000", "the cap was gone before the restart"
        time.sleep(8)  # at 60x, 5 simulated minutes: the cap expires while no enforcer runs
        run.start_enforcer()
        run.wait(600, settle=20)
    finally:
        run.stop()
    left = []
    for dirpath, _, files in os.walk(run.cgroot):
        if "cpu.max" in files:
            with open(os.path.join(dirpath, "cpu.max")) as f:
                if f.read().strip() != "max 100000":
                    left.append(dirpath)
    assert not left, "caps left behind: %s; logs in %s" % (left, run.dir)
    released = [r for r in m.actions if r["kind"] == "RELEASED" and (r["host"], r["task"]) == (a["host"], a["task"])]
    assert released, "the cap held at the crash (%s) was never reported lifted; actions %s" % (
        held,
        dict(m.action_kinds()),
    )
    run.cleanup()
