"""Smoke test of the local stack: every server does its job for a client.

Kafka: an Avro CpiSample in the project's wire format goes through cpi2.samples and back.
Flink: a trivial job runs on the session cluster and its accumulator has the right value.
ClickHouse: a row is inserted and selected. Telegraf: host metrics arrive on Kafka.
"""

import json
import os
import time
import uuid

import pytest
import requests
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource

from cpi2.schemas import wire
from cpi2.testing import stack

pytestmark = pytest.mark.usefixtures("stack_up")


def test_topics_have_partitions_retention_and_compaction():
    admin = AdminClient(stack.kafka_conf("admin"))
    md = admin.list_topics(timeout=10)
    with open(os.path.join(stack.ROOT, "schemas", "topics.conf")) as f:
        wanted = [line.split() for line in f if line.strip() and not line.startswith("#")]
    for name, parts, retention, size, policy, segment, *_ in wanted:
        assert name in md.topics, name
        assert len(md.topics[name].partitions) == int(parts), name
        res = ConfigResource(ConfigResource.Type.TOPIC, name)
        cfg = admin.describe_configs([res])[res].result(timeout=10)
        assert cfg["cleanup.policy"].value == policy, name
        assert cfg["retention.ms"].value == retention, name
        assert cfg["retention.bytes"].value == size, name  # cpi2.samples: bounded, benches fill disks
        assert cfg["segment.ms"].value == segment, name  # cpi2.specs: short segments, so compaction runs


def test_avro_sample_through_kafka():
    host = "smoke-" + uuid.uuid4().hex[:8]
    sample = stack.cpi_sample(host, "smoke", "smoke.slice/t1")
    delivered = []
    p = Producer(stack.kafka_conf("collector", **{"enable.idempotence": True}))
    p.produce(
        "cpi2.samples",
        key=host,
        value=wire.encode("CpiSample", sample),
        on_delivery=lambda err, msg: delivered.append((err, msg)),
    )
    assert p.flush(30) == 0
    err, msg = delivered[0]
    assert err is None, err
    c = Consumer(stack.kafka_conf("admin", **{"group.id": "smoke-" + host, "enable.auto.commit": False}))
    try:
        c.assign([TopicPartition("cpi2.samples", msg.partition(), msg.offset())])
        got = stack.wait_until(lambda: c.poll(1.0), 30, "the sample back from Kafka")
        assert got.error() is None, got.error()
        assert got.key().decode() == host
        assert got.value()[:2] == b"\xc3\x01"
        assert wire.decode("CpiSample", got.value()) == sample
    finally:
        c.close()


def test_trivial_job_runs_on_flink():
    jar = os.path.join(stack.ROOT, "it", "smoke-job", "target", "cpi2-smoke-job-0.1.0.jar")
    assert os.path.exists(jar), "build it first: make -C it build"
    with open(jar, "rb") as f:
        up = requests.post(
            stack.FLINK + "/jars/upload", files={"jarfile": ("smoke.jar", f, "application/x-java-archive")}, timeout=60
        )
    assert up.status_code == 200, up.text
    jar_id = up.json()["filename"].rsplit("/", 1)[-1]
    try:
        n = 5000
        run = requests.post(
            stack.FLINK + "/jars/%s/run" % jar_id,
            json={"entryClass": "org.cpi2.it.SmokeJob", "programArgsList": [str(n)]},
            timeout=120,
        )
        assert run.status_code == 200, run.text
        job = run.json()["jobid"]
        state = stack.wait_until(
            lambda: (lambda s: s if s in ("FINISHED", "FAILED", "CANCELED") else None)(
                requests.get(stack.FLINK + "/jobs/" + job, timeout=10).json()["state"]
            ),
            120,
            "the smoke job to end",
        )
        assert state == "FINISHED", requests.get(stack.FLINK + "/jobs/%s/exceptions" % job, timeout=10).text
        acc = requests.get(stack.FLINK + "/jobs/%s/accumulators" % job, timeout=10).json()
        values = {a["name"]: a["value"] for a in acc["user-task-accumulators"]}
        assert int(values["sum"]) == n * (n + 1)
    finally:
        requests.delete(stack.FLINK + "/jars/" + jar_id, timeout=10)


def test_clickhouse_insert_and_select():
    stack.query("CREATE DATABASE IF NOT EXISTS cpi2_smoke")
    stack.query("CREATE TABLE IF NOT EXISTS cpi2_smoke.t (id String, cpi Float64) ENGINE = MergeTree ORDER BY id")
    rid = uuid.uuid4().hex
    stack.query("INSERT INTO cpi2_smoke.t FORMAT JSONEachRow", json.dumps({"id": rid, "cpi": 1.25}))
    assert stack.query("SELECT cpi FROM cpi2_smoke.t WHERE id = '%s' FORMAT TabSeparated" % rid) == "1.25"
    stack.query("DROP TABLE cpi2_smoke.t")


def test_clickhouse_runs_at_its_nice_level():
    """Every ClickHouse thread (merges, inserts) yields the CPU to the pipeline: stack.env's level."""
    pid = stack.pids()["clickhouse"]
    levels = {os.getpriority(os.PRIO_PROCESS, int(tid)) for tid in os.listdir("/proc/%d/task" % pid)}
    assert levels == {int(stack.E.get("CLICKHOUSE_NICE", "0"))}, (
        "ClickHouse's threads run at nice %s: a stack started before CLICKHOUSE_NICE? make down && make up" % levels
    )


def test_flink_jvms_log_their_collections():
    """make up gives the JobManager and the TaskManager a GC log beside their own logs."""
    pids = stack.pids()
    for name in ("flink-jobmanager", "flink-taskmanager"):
        path = os.path.join(stack.STACK_DIR, "logs", name + "-gc.log")
        args = open("/proc/%d/cmdline" % pids[name]).read().split("\0")
        assert any(a.startswith("-Xlog:gc:file=" + path + ":") for a in args), (
            "%s runs without its GC log: a stack started before it had one? make down && make up" % name
        )
        with open(path) as f:
            assert "Using G1" in f.read(), name  # the JVM's first line there


def test_telegraf_ships_host_metrics_to_kafka():
    c = Consumer(
        stack.kafka_conf(
            "admin", **{"group.id": "smoke-telegraf-" + uuid.uuid4().hex[:6], "auto.offset.reset": "latest"}
        )
    )
    c.subscribe(["cpi2.host-metrics"])
    names = set()
    deadline = time.time() + 60
    try:
        while time.time() < deadline and not {"cpu", "mem", "system"} <= names:
            m = c.poll(1.0)
            if m is not None and m.error() is None:
                names.add(json.loads(m.value())["name"])
    finally:
        c.close()
    assert {"cpu", "mem", "system"} <= names, "got only %s from Telegraf in 60 s" % names


def test_flink_lib_has_the_kafka_clients_the_job_bundles():
    """Kafka's client classes are loaded parent-first from Flink's lib (stack/flink/config.yaml.in:
    loaded per job they leaked the JobManager's metaspace); the job jar must bundle the same version."""
    import glob
    import zipfile

    jar = os.path.join(stack.ROOT, "flink-jobs", "target", "cpi2-flink-jobs-0.1.0.jar")
    with zipfile.ZipFile(jar) as z:
        props = dict(
            line.split("=", 1) for line in z.read("kafka/kafka-version.properties").decode().split() if "=" in line
        )
    libs = glob.glob(os.path.join(stack.STACK_DIR, "lib", "flink", "kafka-clients-*.jar"))
    assert [os.path.basename(p) for p in libs] == ["kafka-clients-%s.jar" % props["version"]], (
        "Flink's lib has %s, the job bundles kafka-clients %s: set flink.kafka.clients.version in stack/jars/pom.xml"
        % (libs, props["version"])
    )
