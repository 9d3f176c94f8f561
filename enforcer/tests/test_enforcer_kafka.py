"""cpi2-enforcer over the real local Kafka, against a fake cgroup v2 tree: caps applied from
incidents and lifted on time, kill -9 with two caps in force then restart (both lifted on time,
original limits back), malformed and random payloads refused to the dead-letter topic while the
enforcer keeps working (dead letters sampled per kind of reason), another host's incident
ignored, SIGTERM lifts every cap."""

import collections
import json
import os
import random
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from cpi2.schemas import wire
from cpi2.testing import stack

ROOT = stack.ROOT

BIN = os.environ.get("ENFORCER_BIN", os.path.join(ROOT, "build", "c", "enforcer", "cpi2-enforcer"))


STARTED = []  # every enforcer process a test started, killed at the end even if the test failed


@pytest.fixture(scope="module", autouse=True)
def up():
    assert os.path.exists(BIN), "build the enforcer first: make -C enforcer build"
    stack.ensure_up()
    yield
    for p in STARTED:
        if p.poll() is None:
            p.kill()
            p.wait()


def cgroup(root, rel, limit="max 100000"):
    d = os.path.join(root, rel)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "cpu.max"), "w") as f:
        f.write(limit + "\n")
    return d


def read_limit(d):
    with open(os.path.join(d, "cpu.max")) as f:
        return f.read().strip()


def incident(host, task, cap=0.1, duration=6, decision="THROTTLE"):
    now = int(time.time() * 1e6)
    return {
        "incident_id": "it-" + uuid.uuid4().hex[:10],
        "host": host,
        "detected_at_us": now,
        "round": 1,
        "victim_task": "ls/victim-1",
        "victim_job": "ls",
        "victim_platform": "p",
        "victim_class": "LATENCY_SENSITIVE",
        "victim_protected": False,
        "victim_cpi": 2.5,
        "victim_cpu_usage": 0.9,
        "cpi_threshold": 2.0,
        "spec_mean": 1.6,
        "spec_stddev": 0.2,
        "window_start_us": now - 600_000_000,
        "window_end_us": now,
        "suspects": [{"task": task, "job": "batch", "task_class": "BATCH", "correlation": 0.5, "cpu_usage": 2.0}],
        "excluded_tasks": [],
        "decision": decision,
        "antagonist_task": task,
        "antagonist_job": "batch",
        "antagonist_class": "BATCH",
        "correlation": 0.5,
        "cap_cpu": cap,
        "cap_duration_s": duration,
        "machine_cpu_utilization": None,
    }


def command(kind, host, task=None, cap=None, duration=None, cid=None, issued=None):
    """An encoded ControlCommand (host None: the cluster)."""
    return wire.encode(
        "ControlCommand",
        {
            "command_id": cid or "cmd-" + uuid.uuid4().hex[:10],
            "issued_at_us": int(time.time() * 1e6) if issued is None else issued,
            "command": kind,
            "host": host,
            "task": task,
            "cap_cpu": cap,
            "duration_s": duration,
            "operator": "it",
            "reason": "test",
        },
    )


def wait_joined(host, logtext):
    """Wait until an enforcer reads what is produced from now on. It starts at the latest offset
    (so it never replays other tests' commands, a cluster kill switch among them): probe with
    uncaps of a cgroup that does not exist until the log shows one refused."""
    probes = []

    def probe():
        task = "no/such/probe-" + uuid.uuid4().hex[:8]
        produce("cpi2.control", host, command("UNCAP", host, task))
        probes.append(task)
        text = logtext()
        return any(p in text for p in probes)

    stack.wait_until(probe, 40, "the enforcer's consumer to join its group", interval=1)


class Enforcer:
    def __init__(self, tmp, host, root, extra=()):
        self.tmp, self.host, self.root, self.extra = tmp, host, root, list(extra)
        self.log = open(os.path.join(tmp, "enforcer-%s.log" % host), "a")
        self.proc = None
        self.group = "cpi2-enforcer-it-" + host + "-" + uuid.uuid4().hex[:6]
        self.starts = 0

    def start(self):
        # a consumer group per start: a restarted consumer in the same group would wait out
        # the killed one's session before it gets the partitions
        self.starts += 1
        serving = self.logtext().count("serving")
        self.proc = subprocess.Popen(
            [
                BIN,
                "--host",
                self.host,
                "--cgroup-root",
                self.root,
                "--state-dir",
                os.path.join(self.tmp, "state"),
                "--brokers",
                stack.KAFKA,
                "--group-id",
                "%s-%d" % (self.group, self.starts),
            ]
            + stack.agent_kafka_args("enforcer")
            + self.extra,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        STARTED.append(self.proc)
        stack.wait_until(
            lambda: self.logtext().count("serving") > serving or self.proc.poll() is not None,
            30,
            "the enforcer to start",
        )
        assert self.proc.poll() is None, open(self.log.name).read()
        wait_joined(self.host, self.logtext)

    def logtext(self):
        return open(self.log.name).read()


def produce(topic, key, value):
    p = Producer(stack.kafka_conf("admin"))
    p.produce(topic, key=key, value=value)
    assert p.flush(10) == 0


def actions_consumer():
    """A consumer of the actions and dead letters written from now on.

    Each partition is assigned at its end as asked for here: with a subscription at "latest",
    a message written before the consumer's own offset lookup ended was silently skipped."""
    c = Consumer(stack.kafka_conf("admin", **{"group.id": "it-actions-" + uuid.uuid4().hex[:6]}))
    start = []
    for topic in ("cpi2.actions", "cpi2.dead-letter"):
        for p in c.list_topics(topic, timeout=10).topics[topic].partitions:
            _, high = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            start.append(TopicPartition(topic, p, high))
    c.assign(start)
    return c


def joining_probe(action):
    """Whether an action answers one of wait_joined's probes: those can still be answered after
    the enforcer has joined, so a consumer started later may see them first."""
    return "no/such/probe-" in (action.get("task") or "") + (action.get("reason") or "")


def drain(c, host, seconds, until=None):
    """This host's actions and the enforcer's dead letters read for seconds, or until until(them)."""
    out = []
    end = time.time() + seconds
    while time.time() < end:
        m = c.poll(0.2)
        if m is None or m.error():
            continue
        if m.topic() == "cpi2.actions":
            a = wire.decode("EnforcementAction", m.value())
            if a["host"] == host and not joining_probe(a):
                out.append(a)
        else:
            d = wire.decode("DeadLetter", m.value())
            if d["component"] == "cpi2-enforcer":
                out.append(d)
        if until and until(out):
            break
    return out


def test_caps_survive_kill_9_and_are_lifted_on_time(tmp_path):
    host = "it-crash-" + uuid.uuid4().hex[:6]
    root = str(tmp_path / "cg")
    a = cgroup(root, "batch/a")
    b = cgroup(root, "batch/b", "50000 100000")
    weight = os.path.join(a, "cpu.weight")  # the program's default cap_weight lowers it with the cap
    with open(weight, "w") as f:
        f.write("100\n")
    e = Enforcer(str(tmp_path), host, root)
    e.start()
    t0 = time.time()
    produce("cpi2.incidents", host, wire.encode("Incident", incident(host, "batch/a", 0.1, 8)))
    produce("cpi2.incidents", host, wire.encode("Incident", incident(host, "batch/b", 0.01, 8)))
    stack.wait_until(lambda: read_limit(a) == "25000 250000" and read_limit(b) == "2500 250000", 15, "both caps")
    e.proc.kill()  # kill -9: no chance to clean up
    e.proc.wait()
    assert read_limit(a) == "25000 250000" and read_limit(b) == "2500 250000"
    assert open(weight).read() == "1"
    e.start()
    # lifted on time: 8 s after they were applied (plus a little), original limits restored
    stack.wait_until(
        lambda: read_limit(a) == "max 100000" and read_limit(b) == "50000 100000",
        20,
        "both caps lifted after the restart",
    )
    assert time.time() - t0 < 8 + 6, "caps lifted late"
    assert time.time() - t0 >= 7.5, "caps lifted early"
    assert open(weight).read() == "100", "the weight found is back with the limit"
    e.proc.terminate()
    assert e.proc.wait(15) == 0
    assert "resumed" in e.logtext() or "RENEWED" in e.logtext()


def test_malformed_payloads_are_refused_and_the_enforcer_keeps_working(tmp_path):
    host = "it-fuzz-" + uuid.uuid4().hex[:6]
    root = str(tmp_path / "cg")
    a = cgroup(root, "batch/a")
    e = Enforcer(str(tmp_path), host, root)
    e.start()
    c = actions_consumer()
    rnd = random.Random(5)
    good = wire.encode("Incident", incident(host, "batch/a"))
    bad = [bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 80))) for _ in range(40)]
    bad += [good[: rnd.randrange(1, len(good))] for _ in range(40)]
    bad += [b"\xc3\x01" + bytes(8) + good[10:]]  # unknown fingerprint
    p = Producer(stack.kafka_conf("admin"))
    for v in bad:
        p.produce("cpi2.incidents", key=host, value=v)
        p.produce("cpi2.control", key=host, value=v)
    assert p.flush(10) == 0
    # another host's incident is ignored; ours is applied afterwards
    produce("cpi2.incidents", "elsewhere", wire.encode("Incident", incident("elsewhere-" + host, "batch/a")))
    produce("cpi2.incidents", host, good)
    stack.wait_until(lambda: read_limit(a) == "25000 250000", 20, "the valid incident's cap after the junk")
    assert e.proc.poll() is None, "the enforcer died on junk:\n" + e.logtext()
    got = drain(c, host, 3)
    dead = [d for d in got if "reason" in d and "component" in d]
    assert dead and all(d["reason"] for d in dead)
    # dead letters are sampled: at most dead_letters_per_min (10) a minute per kind of reason.
    # Counted in this enforcer's log (a line per dead letter it sends): other enforcers on the
    # same Kafka may send their own for the same messages.
    sent = re.findall(r"refused message cpi2\.(?:incidents|control)\[\d+\]@\d+: (.*)", e.logtext())
    kinds = collections.Counter(re.split(r"[0-9]", reason)[0][:47] for reason in sent)
    assert 0 < len(sent) < 2 * len(bad) and max(kinds.values()) <= 10, kinds
    applied = [x for x in got if x.get("kind") == "APPLIED"]
    assert len(applied) == 1 and applied[0]["task"] == "batch/a"
    e.proc.send_signal(signal.SIGTERM)
    assert e.proc.wait(15) == 0
    assert read_limit(a) == "max 100000", "SIGTERM must lift every cap"
    released = [x for x in drain(c, host, 3) if x.get("kind") == "RELEASED"]
    assert released and released[0]["cause"] == "SHUTDOWN"
    c.close()


def test_hostile_path_is_refused_and_reported(tmp_path):
    host = "it-hostile-" + uuid.uuid4().hex[:6]
    root = str(tmp_path / "cg")
    cgroup(root, "batch/a")
    outside = cgroup(str(tmp_path), "outside")
    e = Enforcer(str(tmp_path), host, root)
    e.start()
    c = actions_consumer()
    produce("cpi2.incidents", host, wire.encode("Incident", incident(host, "../outside")))
    got = stack.wait_until(lambda: [x for x in drain(c, host, 1) if x.get("kind") == "REFUSED"], 20, "a REFUSED action")
    assert "'..'" in got[0]["reason"] or "escapes" in got[0]["reason"], got[0]
    assert read_limit(outside) == "max 100000"
    e.proc.terminate()
    e.proc.wait(15)
    c.close()


def http_get(port, path):
    """(status, body) of GET http://127.0.0.1:port/path."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_metrics_health_and_json_log(tmp_path):
    """--metrics-address: /metrics counts what the enforcer did (an incident's cap, a dead letter,
    the incident-to-cap histogram, caps in force), /healthz is good while its loop polls;
    --log-format json: every line of its log is one JSON object."""
    host = "it-metrics-" + uuid.uuid4().hex[:6]
    root = str(tmp_path / "cg")
    a = cgroup(root, "batch/a")
    e = Enforcer(str(tmp_path), host, root, ["--metrics-address", "127.0.0.1:0", "--log-format", "json"])
    e.start()
    port = int(re.search(r"\(port (\d+)\)", e.logtext()).group(1))
    produce("cpi2.incidents", host, b"junk")
    produce("cpi2.incidents", host, wire.encode("Incident", incident(host, "batch/a", 0.1, 30)))
    stack.wait_until(lambda: read_limit(a) == "25000 250000", 20, "the incident's cap")

    def metrics():
        status, body = http_get(port, "/metrics")
        assert status == 200, body
        return dict(re.findall(r"^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$", body, re.M))

    m = stack.wait_until(
        lambda: (lambda m: m if m.get("cpi2_enforcer_caps_in_force") == "1" else None)(metrics()), 10, "caps_in_force 1"
    )
    assert m['cpi2_enforcer_actions_total{kind="APPLIED",cause="INCIDENT"}'] == "1", m
    assert m['cpi2_enforcer_actions_total{kind="RELEASED",cause="EXPIRY"}'] == "0", m
    assert int(m["cpi2_enforcer_dead_letters_total"]) >= 1, m
    assert int(m['cpi2_enforcer_messages_total{topic="incidents"}']) >= 2, m
    assert m["cpi2_enforcer_incident_to_cap_seconds_count"] == "1", m
    assert m['cpi2_enforcer_incident_to_cap_seconds_bucket{le="+Inf"}'] == "1", m
    assert m['cpi2_enforcer_protection_off{scope="cluster"}'] == "0", m
    assert float(m["process_cpu_seconds_total"]) > 0, m
    status, body = http_get(port, "/healthz")
    assert status == 200 and body.startswith("ok: last progress "), body
    e.proc.send_signal(signal.SIGTERM)
    assert e.proc.wait(15) == 0
    assert read_limit(a) == "max 100000"
    lines = e.logtext().splitlines()
    records = [json.loads(line) for line in lines]  # fails on any line that is not JSON
    assert {r["module"] for r in records} >= {"enforcer"} and all(r["level"] and r["msg"] for r in records)
    assert any("cpi2.incidents" in r["msg"] and r["level"] == "warn" for r in records), lines
