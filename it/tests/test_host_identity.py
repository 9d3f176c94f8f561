"""One identity per host (issue 33), over the real local stack. Each host of stack/kafka/hosts.conf
has its own Kafka principals (collector-HOST, enforcer-HOST) and signing key (its client files'
cpi2.host.key); the detection job, submitted with the stack's master keys (--kafka.host-keys),
takes a sample or an action only from the host it names (python/cpi2/hostauth.py).

- node-a's collector credentials, playing a whole fleet with case 2's antagonist (cpi2-fleetsim),
  lead to no incident on any host: every sample is refused as not its host's. The same run with
  the fleet simulator's master (the collector principal) gives THROTTLE incidents
  (it/tests/test_e2e_pipeline.py, the same scenario and seed).
- Meanwhile the job takes node-a's own samples signed with its key, and refuses samples of node-b
  written with node-a's credentials: signed as node-a, unsigned, or with node-a's key under
  node-b's name.
- node-a's enforcer credentials cannot join node-b's consumer group (literal group ACLs): neither
  with a consumer of their own nor as cpi2-enforcer --host node-b; they can join node-a's.
"""

import subprocess
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer

from cpi2 import hostauth, names
from cpi2.e2e import pipeline
from cpi2.schemas import wire
from cpi2.testing import stack

pytestmark = pytest.mark.usefixtures("stack_up")

A, B = "node-a", "node-b"


def client_file(principal):
    path = stack.kafka_client_file(principal)
    if not path:
        pytest.skip("the stack has no per-host identities (stack/kafka/hosts.conf; make down && make up)")
    return path


def signing(principal):
    """(host, key id, key) of a host's client file."""
    props = dict(line.strip().split("=", 1) for line in open(client_file(principal)) if "=" in line)
    return props["cpi2.host"], props["cpi2.host.key.id"], bytes.fromhex(props["cpi2.host.key"])


def group_error(principal, group):
    """The error a consumer of principal meets joining group on cpi2.control (None: it joined)."""
    c = Consumer(
        stack.kafka_conf(
            principal, **{"group.id": group, "auto.offset.reset": "latest", "enable.auto.commit": False, "log_level": 0}
        )
    )
    try:
        c.subscribe([names.CONTROL])
        deadline = time.time() + 20
        while time.time() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is not None:
                return m.error().code()
            if c.assignment():
                return None
        raise AssertionError("%s: neither an assignment nor an error for group %s" % (principal, group))
    finally:
        c.close()


def test_a_hosts_enforcer_credentials_join_only_its_own_group(tmp_path):
    client_file("enforcer-node-a")
    assert group_error("enforcer-node-a", "cpi2-enforcer-" + B) == KafkaError.GROUP_AUTHORIZATION_FAILED
    assert group_error("enforcer-node-a", "cpi2-enforcer-" + A) is None
    # the real enforcer, told it is node-b, with node-a's credentials: its group is node-b's
    root = tmp_path / "cg"
    (root / "batch" / "a").mkdir(parents=True)
    (root / "batch" / "a" / "cpu.max").write_text("max 100000\n")
    log = tmp_path / "enforcer.log"
    with open(log, "w") as f:
        p = subprocess.Popen(
            [
                pipeline.ENFORCER,
                "--host",
                B,
                "--cgroup-root",
                str(root),
                "--state-dir",
                str(tmp_path / "state"),
                "--brokers",
                stack.KAFKA,
                "--kafka-client-file",
                client_file("enforcer-node-a"),
            ],
            stdout=f,
            stderr=f,
        )
    try:
        stack.wait_until(lambda: "authoriz" in log.read_text().lower(), 30, "the group to be refused")
    finally:
        p.terminate()
        p.wait(30)
    assert "Group authorization failed" in log.read_text() or "GROUP_AUTHORIZATION_FAILED" in log.read_text()


def test_a_hosts_collector_credentials_write_no_other_hosts_samples():
    host, key_id, key = signing("collector-node-a")
    assert host == A
    run = pipeline.Run(
        "case2",
        speed=240,
        duration="1h",
        seed=3,
        fleetsim_args=["--kafka-client-file", client_file("collector-node-a")],
    )
    run.start()
    try:
        run.wait(600, settle=20)
        before = pipeline.samples_read(run.job)[0]
        job, forged = produce_own_and_forged(key_id, key)
        published = run.published()
        m = run.monitor

        def fleet_refused():  # the job refuses each sample as a dead letter, as it reads them
            m.poll(1)
            return sum("signed by host node-a" in d["reason"] for d in m.dead_letters) >= published

        stack.wait_until(fleet_refused, 600, "the job to refuse the fleet's %d samples" % published)
        mine = [d for d in m.dead_letters if d["reason"].startswith(("record of host node-b", "record not signed"))]
        assert len(mine) == forged and {wire.decode("CpiSample", d["payload"])["job"] for d in mine} == {job}, [
            d["reason"] for d in mine
        ]
        reasons = {d["reason"] for d in mine}
        assert any("signed by host node-a" in r for r in reasons), reasons
        assert any("not signed with its key" in r for r in reasons), reasons
        assert any("not signed by its host" in r for r in reasons), reasons
        # node-a's own samples, and none of the fleet's, reached the detector (its vertex also
        # reads the enforcers' actions: a few)
        stack.wait_until(lambda: pipeline.samples_read(run.job)[0] >= before + 10, 60, "node-a's samples read")
        assert before < 10 and pipeline.samples_read(run.job)[0] < 30, (before, published)
    finally:
        run.stop()
    assert m.incidents == [], "incidents from node-a's credentials: %s" % m.incidents[:3]
    assert m.action_kinds().get("APPLIED", 0) == 0
    hosts = {d["reason"].split()[3] for d in m.dead_letters if "signed by host node-a" in d["reason"]}
    assert A not in hosts and len(hosts) > 1, hosts  # every host of the fleet, none of them node-a
    run.cleanup()


def produce_own_and_forged(key_id, key):
    """Ten samples of node-a signed with its key, and thirty of node-b written with node-a's
    credentials: signed as node-a, unsigned, and signed with node-a's key under node-b's name.
    Returns (their job, how many are node-b's)."""
    p = Producer(stack.kafka_conf("collector-node-a"))
    now = int(time.time() * 1e6)
    job = "identity-" + uuid.uuid4().hex[:6]
    forged = 0
    for i in range(10):
        for who, how in ((A, "own"), (B, "as-a"), (B, "unsigned"), (B, "as-b")):
            s = stack.cpi_sample(who, job, "id.slice/t%d" % i)
            s["window_start_us"] = now + i
            v = wire.encode("CpiSample", s)
            h = None
            if how != "unsigned":  # node-a's key, under node-a's name or node-b's
                h = hostauth.headers(key, key_id, B if how == "as-b" else A, names.SAMPLES, v)
            p.produce(names.SAMPLES, key=who, value=v, headers=h)
            forged += who == B
    assert p.flush(15) == 0
    return job, forged
