"""The multi-node profile of the local stack (stack/multi.env, issue 25).

On any stack: stack/up.sh --check and --render show what the profile would run, starting nothing
(the members' ports, and each Kafka node's rendered configuration), and the single-node render
stays one node of one replica. On a running multi-node stack (STACK_ENV's KAFKA_BROKERS > 1):
its brokers, topics, TaskManagers and the detection job at JOB_PARALLELISM, as the servers
report them; skipped on the single-node stack, which `make test` runs.
"""

import os
import re
import subprocess
import time

import pytest
import requests

from cpi2 import repo
from cpi2.testing import stack

UP = os.path.join(stack.ROOT, "stack", "up.sh")
MULTI_ENV = os.path.join(stack.ROOT, "stack", "multi.env")
SINGLE_ENV = os.path.join(stack.ROOT, "stack", "stack.env")
MULTI = int(stack.E.get("KAFKA_BROKERS", "1")) > 1
live = pytest.mark.skipif(
    not MULTI,
    reason="the running stack is the single-node one (%s has no KAFKA_BROKERS > 1); "
    "run with STACK_ENV=stack/multi.env (or a copy on other ports) after make up" % stack.ENV_PATH,
)


def _up(*args, env_file, stack_dir):
    env = dict(os.environ, STACK_ENV=str(env_file), STACK_DIR=str(stack_dir))
    return subprocess.run([UP] + list(args), capture_output=True, text=True, env=env, timeout=120)


def _props(path):
    """A rendered server.properties as a dict (comments skipped)."""
    out = {}
    for line in open(path):
        if line.strip() and not line.startswith("#") and "=" in line:
            k, v = line.rstrip("\n").split("=", 1)
            out[k] = v
    return out


# --- what the profile would run (any stack; nothing is started) ------------------------------


def test_multi_env_has_every_key_of_stack_env_and_the_cluster_sizes():
    single, multi = repo.read_env(SINGLE_ENV), repo.read_env(MULTI_ENV)
    assert set(single) <= set(multi), "keys of stack.env missing in multi.env: %s" % (set(single) - set(multi))
    for key, value in single.items():
        if key.endswith("_PORT") or key == "STACK_HOST":
            assert multi[key] == value, "%s: member 0 keeps the single-node port (%s != %s)" % (key, multi[key], value)
    want = {
        "KAFKA_BROKERS": "3",
        "KAFKA_REPLICATION_FACTOR": "3",
        "KAFKA_MIN_INSYNC_REPLICAS": "2",
        "FLINK_TASKMANAGERS": "2",
        "JOB_PARALLELISM": "4",
        "KAFKA_DELIVERY": "exactly-once",
        "CLICKHOUSE_SHARDS": "2",
        "CLICKHOUSE_REPLICAS": "2",
    }
    assert {k: multi.get(k) for k in want} == want
    # The job at JOB_PARALLELISM fits the TaskManagers' slots with the loader beside it.
    assert int(multi["FLINK_TASKMANAGERS"]) * int(multi["FLINK_TM_SLOTS"]) > int(multi["JOB_PARALLELISM"])


def test_check_lists_every_member_on_its_own_ports(tmp_path):
    r = _up("--check", env_file=MULTI_ENV, stack_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    env = repo.read_env(MULTI_ENV)
    kp, cp = int(env["KAFKA_PORT"]), int(env["KAFKA_CONTROLLER_PORT"])
    for i, name in enumerate(["kafka", "kafka-1", "kafka-2"]):
        assert (
            "%s: node.id %d, 127.0.0.1:%d, controller 127.0.0.1:%d" % (name, i + 1, kp + 2 * i, cp + 2 * i) in r.stdout
        ), r.stdout
    assert "Kafka bootstrap %s," % repo.kafka_bootstrap(env) in r.stdout, r.stdout
    assert "flink-taskmanager flink-taskmanager-1" in r.stdout, r.stdout
    assert not os.listdir(tmp_path), "--check wrote %s" % os.listdir(tmp_path)


def test_check_refuses_a_member_port_taken_by_another_server(tmp_path):
    # kafka-1's broker port is KAFKA_PORT+2: a controller port there collides with it.
    env = repo.read_env(MULTI_ENV)
    bad = tmp_path / "multi.env"
    bad.write_text(open(MULTI_ENV).read() + "\nKAFKA_CONTROLLER_PORT=%d\n" % (int(env["KAFKA_PORT"]) + 4))
    r = _up("--check", env_file=bad, stack_dir=tmp_path / "s")
    assert r.returncode != 0
    assert "used twice" in r.stderr and "kafka-2" in r.stderr, r.stderr
    # and a replication factor the brokers cannot hold
    bad.write_text(open(MULTI_ENV).read() + "\nKAFKA_REPLICATION_FACTOR=4\n")
    r = _up("--check", env_file=bad, stack_dir=tmp_path / "s")
    assert r.returncode != 0 and "exceeds KAFKA_BROKERS=3" in r.stderr, r.stderr


def test_render_makes_three_kraft_nodes_of_one_quorum(tmp_path):
    r = _up("--render", env_file=MULTI_ENV, stack_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    env = repo.read_env(MULTI_ENV)
    kp, cp = int(env["KAFKA_PORT"]), int(env["KAFKA_CONTROLLER_PORT"])
    voters = ",".join("%d@127.0.0.1:%d" % (i + 1, cp + 2 * i) for i in range(3))
    for i, name in enumerate(["kafka", "kafka-1", "kafka-2"]):
        p = _props(tmp_path / name / "server.properties.new")
        assert p["node.id"] == str(i + 1), name
        assert p["controller.quorum.voters"] == voters, name
        assert p["listeners"] == "SASL_SSL://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" % (kp + 2 * i, cp + 2 * i), name
        assert p["advertised.listeners"] == "SASL_SSL://127.0.0.1:%d" % (kp + 2 * i), name
        assert p["log.dirs"] == str(tmp_path / name / "data"), name
        assert p["super.users"] == "User:admin" and p["inter.broker.listener.name"] == "SASL_SSL", name
        for key in ("offsets.topic.replication.factor", "transaction.state.log.replication.factor"):
            assert p[key] == "3", (name, key)
        assert p["transaction.state.log.min.isr"] == "2" and p["min.insync.replicas"] == "2", name
        # every node knows admin's password on the controller listener (the quorum's own traffic)
        assert 'user_admin="' in p["listener.name.controller.plain.sasl.jaas.config"], name
    flink = open(tmp_path / "flink" / "conf" / "config.yaml").read()
    assert re.search(r"load-balance:\s*\n\s*mode: SLOTS", flink), "slots are not spread over the TaskManagers"


def test_single_node_render_is_one_node_of_one_replica(tmp_path):
    r = _up("--render", env_file=SINGLE_ENV, stack_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(d for d in os.listdir(tmp_path) if d.startswith("kafka")) == ["kafka"]
    p = _props(tmp_path / "kafka" / "server.properties.new")
    env = repo.read_env(SINGLE_ENV)
    assert p["node.id"] == "1"
    assert p["controller.quorum.voters"] == "1@127.0.0.1:%s" % env["KAFKA_CONTROLLER_PORT"]
    assert p["log.dirs"] == str(tmp_path / "kafka" / "data")
    assert p["offsets.topic.replication.factor"] == "1" and p["transaction.state.log.min.isr"] == "1"
    assert "min.insync.replicas" not in p


# --- the running multi-node stack ----------------------------------------------------------


@pytest.fixture(scope="module")
def multi_up():
    stack.ensure_up()
    yield
    stack.ensure_up()


@live
def test_three_brokers_and_every_topic_on_three_replicas_two_in_sync(multi_up):
    from confluent_kafka.admin import AdminClient, ConfigResource

    n, rf, isr = (int(stack.E[k]) for k in ("KAFKA_BROKERS", "KAFKA_REPLICATION_FACTOR", "KAFKA_MIN_INSYNC_REPLICAS"))
    admin = AdminClient(stack.kafka_conf("admin"))
    md = admin.list_topics(timeout=15)
    assert sorted(md.brokers) == list(range(1, n + 1))
    want = [
        line.split()[0]
        for line in open(os.path.join(stack.ROOT, "schemas", "topics.conf"))
        if line.strip() and not line.startswith("#")
    ]
    for name in want:
        assert name in md.topics, name
        for p in md.topics[name].partitions.values():
            assert len(p.replicas) == rf, (name, p.id, p.replicas)
        res = ConfigResource(ConfigResource.Type.TOPIC, name)
        assert admin.describe_configs([res])[res].result(timeout=15)["min.insync.replicas"].value == str(isr), name
    for b in md.brokers:
        res = ConfigResource(ConfigResource.Type.BROKER, str(b))
        cfg = admin.describe_configs([res])[res].result(timeout=15)
        assert cfg["offsets.topic.replication.factor"].value == str(rf), b
        assert cfg["transaction.state.log.replication.factor"].value == str(rf), b
        assert cfg["transaction.state.log.min.isr"].value == str(isr), b
    # A client that knows every broker: the bootstrap list the agents and the job are given
    assert stack.KAFKA == repo.kafka_bootstrap(stack.E) and stack.KAFKA.count(",") == n - 1


@live
def test_a_client_of_every_broker_works_on_without_broker_0(multi_up):
    """kill -9 of member 0 (the single-node address): a topic of the profile's replicas takes
    writes with acks=all and gives them back to a client of the bootstrap list; make up brings the
    member back."""
    import uuid

    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = "cpi2-test-multinode-" + uuid.uuid4().hex[:8]
    admin = AdminClient(stack.kafka_conf("admin"))
    rf, isr = stack.E["KAFKA_REPLICATION_FACTOR"], stack.E["KAFKA_MIN_INSYNC_REPLICAS"]
    admin.create_topics([NewTopic(topic, 4, int(rf), config={"min.insync.replicas": isr})])[topic].result(timeout=60)
    try:
        stack.kill_server("kafka")
        p = Producer(stack.kafka_conf("admin", acks="all", **{"enable.idempotence": True}))
        acked = []
        for i in range(200):
            p.produce(
                topic, key=str(i % 7), value=str(i), on_delivery=lambda err, m: acked.append(err is None and m.value())
            )
        assert p.flush(120) == 0, "messages left unacknowledged without broker 0"
        assert sorted(int(v) for v in acked if v) == list(range(200)), [a for a in acked if not a][:5]
        c = Consumer(stack.kafka_conf("admin", **{"group.id": topic, "auto.offset.reset": "earliest"}))
        c.subscribe([topic])
        got = []
        try:
            deadline = time.time() + 120
            while len(got) < 200 and time.time() < deadline:
                m = c.poll(1)
                if m is not None and not m.error():
                    got.append(int(m.value()))
        finally:
            c.close()
        assert sorted(got) == list(range(200)), "read back %d of 200 without broker 0" % len(got)
    finally:
        stack.ensure_up()  # make up starts the missing member
        admin.delete_topics([topic])
    assert stack.status().returncode == 0


@live
def test_taskmanagers_registered_under_their_names(multi_up):
    tms = requests.get(stack.FLINK + "/taskmanagers", timeout=10).json()["taskmanagers"]
    names = ["flink-taskmanager"] + ["flink-taskmanager-%d" % i for i in range(1, int(stack.E["FLINK_TASKMANAGERS"]))]
    assert sorted(t["id"] for t in tms) == sorted(names)
    assert all(t["slotsNumber"] == int(stack.E["FLINK_TM_SLOTS"]) for t in tms), tms


@live
def test_detection_job_runs_at_the_profile_parallelism_on_every_taskmanager(multi_up):
    from confluent_kafka.admin import AdminClient

    from cpi2.e2e import pipeline

    if not os.path.exists(pipeline.JOB_JAR):
        pytest.skip("no job jar at %s: make -C flink-jobs build" % pipeline.JOB_JAR)
    # as every end-to-end run does: a job an earlier test left running would make the submit refuse
    pipeline.cancel_running_jobs()
    # flink-rest.sh as pipeline.rest runs it, its log line of the job's options kept
    env = dict(os.environ, **stack.E, STACK_DIR=stack.STACK_DIR)
    r = subprocess.run(
        [pipeline.REST, "submit", pipeline.JOB_JAR, ""] + pipeline.job_options(),
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    assert r.returncode == 0, r.stderr
    jid = r.stdout.strip().splitlines()[-1]
    try:
        ran = [line for line in r.stderr.splitlines() if "running org.cpi2.flink.Cpi2Job" in line]
        assert ran, r.stderr
        assert "--kafka.bootstrap %s " % stack.KAFKA in ran[0], ran[0]
        assert "--job.parallelism %s " % stack.E["JOB_PARALLELISM"] in ran[0], ran[0]
        if stack.E.get("KAFKA_DELIVERY"):
            assert "--kafka.delivery %s " % stack.E["KAFKA_DELIVERY"] in ran[0], ran[0]
        job = stack.wait_until(
            lambda: (
                lambda j: (
                    j if j["state"] == "RUNNING" and all(v["status"] == "RUNNING" for v in j["vertices"]) else None
                )
            )(requests.get(stack.FLINK + "/jobs/" + jid, timeout=10).json()),
            120,
            "every task of job %s to run" % jid,
        )
        want = int(stack.E["JOB_PARALLELISM"])
        assert {v["parallelism"] for v in job["vertices"]} == {want}, [
            (v["name"], v["parallelism"]) for v in job["vertices"]
        ]
        tms = set()
        for v in job["vertices"]:
            got = requests.get(stack.FLINK + "/jobs/%s/vertices/%s/taskmanagers" % (jid, v["id"]), timeout=10).json()
            tms |= {t["taskmanager-id"] for t in got["taskmanagers"]}
        assert len(tms) == int(stack.E["FLINK_TASKMANAGERS"]), "the job's tasks run on %s only" % tms
        if stack.E.get("KAFKA_DELIVERY") == "exactly-once":
            # Transactional sinks made the transaction log, replicated as the stack's topics
            admin = AdminClient(stack.kafka_conf("admin"))
            md = stack.wait_until(
                lambda: (lambda m: m if "__transaction_state" in m.topics else None)(admin.list_topics(timeout=10)),
                60,
                "the transaction log __transaction_state",
            )
            rf = {len(p.replicas) for p in md.topics["__transaction_state"].partitions.values()}
            assert rf == {int(stack.E["KAFKA_REPLICATION_FACTOR"])}, rf
    finally:
        requests.patch(stack.FLINK + "/jobs/%s?mode=cancel" % jid, timeout=10)
