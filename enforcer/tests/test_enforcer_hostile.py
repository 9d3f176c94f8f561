"""cpi2-enforcer against hostile messages and operator mistakes, over the real local Kafka and
fake cgroup trees (one row each of the table in enforcer/README.md): caps that would raise a
limit, parents, symlinks, stale / future / replayed messages, a new consumer group, the rate
limit, large messages and another host's, a host name with a NUL byte, control characters in
ids, the kill switch and 200 caps across restarts, a malformed state file, two enforcers on one
state folder, SIGHUP (enforcer, collector, fleetsim), the capabilities kept, a limit the kubelet
changes under a cap, the per-namespace opt-in list, the memory one host reserves."""

import glob
import os
import signal
import subprocess
import time
import uuid

import pytest
from confluent_kafka import Producer
from test_enforcer_kafka import (
    BIN,
    ROOT,
    actions_consumer,
    cgroup,
    command,
    drain,
    incident,
    read_limit,
    stack,
    wait_joined,
    wire,
)

COLLECTOR = os.environ.get(
    "COLLECTOR_BIN", os.path.join(ROOT, "build", "c", "collectors", "collector", "cpi2-collector")
)
FLEETSIM = os.environ.get("FLEETSIM_BIN", os.path.join(ROOT, "build", "c", "collectors", "fleetsim", "cpi2-fleetsim"))

# Kafka clients through cpi2.testing.stack's helpers where the stack has them (authenticated
# Kafka), plain bootstrap.servers otherwise.
kafka_conf = getattr(stack, "kafka_conf", lambda p="admin", **extra: dict({"bootstrap.servers": stack.KAFKA}, **extra))
agent_kafka_args = getattr(stack, "agent_kafka_args", lambda p: [])


@pytest.fixture(scope="module", autouse=True)
def up():
    assert os.path.exists(BIN), "build the enforcer first: make -C enforcer build"
    stack.ensure_up()


class Enforcer:
    """One cpi2-enforcer process on a fake tree; start() again = a restart on the same state."""

    def __init__(self, tmp, root, *args, host=None, state=None):
        self.tmp, self.root, self.args = str(tmp), root, list(args)
        self.host = host or "hostile-" + uuid.uuid4().hex[:8]
        self.state = state or os.path.join(self.tmp, "state-" + self.host)
        self.starts = 0
        self.logpath = os.path.join(self.tmp, "enforcer-%s.log" % self.host)
        self.proc = None

    def command(self):
        # a consumer group per start: a restarted consumer in the same group waits out the
        # killed one's session before it gets the partitions; what a restart must remember
        # comes from the state folder, not from Kafka offsets
        group = "cpi2-enforcer-it-%s-%d" % (self.host, self.starts)
        return (
            [
                BIN,
                "--host",
                self.host,
                "--cgroup-root",
                self.root,
                "--state-dir",
                self.state,
                "--brokers",
                stack.KAFKA,
                "--group-id",
                group,
            ]
            + self.args
            + agent_kafka_args("enforcer")
        )

    def start(self, wait=True):
        self.starts += 1
        with open(self.logpath, "a") as log:
            self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT)
        if wait:
            n = self.log().count("serving")
            stack.wait_until(
                lambda: self.log().count("serving") > n or self.proc.poll() is not None, 30, "the enforcer to start"
            )
            assert self.proc.poll() is None, self.log()
            wait_joined(self.host, self.log)
        return self

    def log(self):
        return open(self.logpath, errors="replace").read()

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            return self.proc.wait(30)
        return self.proc.returncode if self.proc else None


@pytest.fixture
def enforcers():
    started = []
    yield started
    for e in started:
        e.stop(signal.SIGKILL)


def start(enforcers, tmp_path, root, *args, **kw):
    """An enforcer started on root (killed after the test)."""
    e = Enforcer(tmp_path, root, *args, **kw).start()
    enforcers.append(e)
    return e


def produce(topic, key, value, timestamp=None):
    """Produce one message; returns its (partition, offset)."""
    p = Producer(kafka_conf("admin"))
    where = []
    kw = {} if timestamp is None else {"timestamp": timestamp}
    p.produce(topic, key=key, value=value, on_delivery=lambda err, m: where.append((m.partition(), m.offset())), **kw)
    assert p.flush(10) == 0 and where
    return where[0]


def send_incident(host, task, key=None, **fields):
    rec = incident(host, task)
    rec.update(fields)
    produce("cpi2.incidents", host if key is None else key, wire.encode("Incident", rec))
    return rec


class Actions:
    """The actions of one host and the enforcer's dead letters, from now on."""

    def __init__(self, host):
        self.host = host
        self.c = actions_consumer()

    def collect(self, seconds, until=None):
        return drain(self.c, self.host, seconds, until)

    def close(self):
        self.c.close()


def kinds(got, kind):
    return [a for a in got if a.get("kind") == kind]


def first_refusal(e, task, **fields):
    """Send an incident naming task; the REFUSED action it gets."""
    c = Actions(e.host)
    try:
        send_incident(e.host, task, **fields)
        got = c.collect(20, until=lambda g: kinds(g, "REFUSED") or kinds(g, "APPLIED"))
    finally:
        c.close()
    assert kinds(got, "REFUSED") and not kinds(got, "APPLIED"), got
    return kinds(got, "REFUSED")[0]


def test_a_cap_never_raises_the_limit_in_force(tmp_path, enforcers):
    root = str(tmp_path / "cg")
    held = cgroup(root, "batch/held", "50000 100000")  # the orchestrator holds it at 0.5 CPU
    e = start(enforcers, tmp_path, root)
    assert "already at or below" in first_refusal(e, "batch/held", cap_cpu=1024.0)["reason"]
    assert read_limit(held) == "50000 100000"


def test_a_parent_cgroup_is_never_capped(tmp_path, enforcers):
    root = str(tmp_path / "cg")
    pods = [cgroup(root, "kubepods.slice/pod-%d" % i) for i in range(3)]
    parent = cgroup(root, "kubepods.slice")
    e = start(enforcers, tmp_path, root)
    assert "leaf" in first_refusal(e, "kubepods.slice")["reason"]
    assert read_limit(parent) == "max 100000" and all(read_limit(p) == "max 100000" for p in pods)


def test_protected_cgroups_hold_through_a_symlinked_root_and_spaces(tmp_path, enforcers):
    real = str(tmp_path / "cg")
    coll = cgroup(real, "collector.scope")
    link = str(tmp_path / "cg-link")
    os.symlink(real, link)
    e = start(enforcers, tmp_path, link, "--protected-cgroups", " %s/collector.scope , %s/other.scope " % (link, link))
    assert "protected" in first_refusal(e, "collector.scope")["reason"]
    assert read_limit(coll) == "max 100000"


def test_a_release_never_writes_through_a_symlink(tmp_path, enforcers):
    root = str(tmp_path / "cg")
    a = cgroup(root, "batch/a")
    outside = tmp_path / "precious"
    outside.write_text("do not truncate\n")
    e = start(enforcers, tmp_path, root)
    send_incident(e.host, "batch/a")
    stack.wait_until(lambda: read_limit(a) == "25000 250000", 20, "the cap")
    os.unlink(os.path.join(a, "cpu.max"))
    os.symlink(str(outside), os.path.join(a, "cpu.max"))  # swapped while the cap is in force
    assert e.stop() == 0
    assert outside.read_text() == "do not truncate\n"
    assert "FAILED" in e.log()


def test_stale_missing_and_future_timestamps_are_refused(tmp_path, enforcers):
    root = str(tmp_path / "cg")
    now_us, now_ms = int(time.time() * 1e6), int(time.time() * 1000)
    rows = {  # task: (incident fields, Kafka timestamp ms or None)
        "t/no-detected-at": ({"detected_at_us": 0}, None),
        "t/detected-in-the-future": ({"detected_at_us": now_us + 3600 * 10**6}, None),
        "t/detected-two-hours-ago": ({"detected_at_us": now_us - 7200 * 10**6}, None),
        "t/kafka-an-hour-ago": ({}, now_ms - 3600 * 1000),
        "t/kafka-in-the-future": ({}, now_ms + 1800 * 1000),
    }
    dirs = {t: cgroup(root, t) for t in list(rows) + ["t/cmd-old", "t/cmd-no-issued", "t/good"]}
    e = start(enforcers, tmp_path, root, "--max-caps", "16")
    c = Actions(e.host)
    for task, (fields, ts) in rows.items():
        rec = incident(e.host, task)
        rec.update(fields)
        produce("cpi2.incidents", e.host, wire.encode("Incident", rec), timestamp=ts)
    produce("cpi2.control", e.host, command("CAP", e.host, "t/cmd-old", issued=now_us - 7200 * 10**6))
    produce("cpi2.control", e.host, command("CAP", e.host, "t/cmd-no-issued", issued=0))
    send_incident(e.host, "t/good")
    stack.wait_until(lambda: read_limit(dirs["t/good"]) == "25000 250000", 20, "the fresh incident's cap")
    got = c.collect(3)
    refused = {a["task"]: a["reason"] for a in kinds(got, "REFUSED")}
    for task in list(rows) + ["t/cmd-old", "t/cmd-no-issued"]:
        assert read_limit(dirs[task]) == "max 100000", task
        assert "stale" in refused.get(task, ""), (task, refused)
    c.close()


def capped_by_an_incident(tmp_path, enforcers, duration=600):
    """An enforcer that capped batch/a for an incident of duration s: (the cgroup, it, the incident)."""
    root = str(tmp_path / "cg")
    a = cgroup(root, "batch/a")
    e = start(enforcers, tmp_path, root)
    rec = send_incident(e.host, "batch/a", cap_duration_s=duration)
    # the limit is written before the APPLIED line is logged: wait for both, or a kill -9 in
    # between loses the line the tests count
    stack.wait_until(
        lambda: read_limit(a) == "25000 250000" and "APPLIED batch/a" in e.log(), 20, "the cap and its log line"
    )
    return a, e, rec


def test_a_replayed_incident_recaps_nothing_after_an_uncap_and_a_restart(tmp_path, enforcers):
    a, e, rec = capped_by_an_incident(tmp_path, enforcers)
    produce("cpi2.control", e.host, command("UNCAP", e.host, "batch/a"))
    stack.wait_until(lambda: read_limit(a) == "max 100000", 20, "the operator's uncap")
    e.stop(signal.SIGKILL)
    e.start()
    produce("cpi2.incidents", e.host, wire.encode("Incident", rec))  # the same incident again
    stack.wait_until(lambda: "replayed incident" in e.log(), 20, "the replay to be refused")
    assert read_limit(a) == "max 100000"


def test_a_replay_renews_nothing_after_a_crash_before_its_id_was_remembered(tmp_path, enforcers):
    # the ids seen are written after the cap: a kill -9 in between is this, seen-ids without it
    a, e, rec = capped_by_an_incident(tmp_path, enforcers)
    e.stop(signal.SIGKILL)
    os.remove(os.path.join(e.state, "seen-ids"))
    caps = os.path.join(e.state, e.host + ".caps")
    before = [line for line in open(caps) if line.startswith("cap")]
    assert before
    e.start()
    produce("cpi2.incidents", e.host, wire.encode("Incident", rec))
    stack.wait_until(lambda: "replayed incident" in e.log(), 20, "the replay to be refused")
    assert [line for line in open(caps) if line.startswith("cap")] == before  # same expiry
    assert "RENEWED batch/a (INCIDENT" not in e.log()
    assert read_limit(a) == "25000 250000"  # resumed, until its own expiry


def test_a_replay_caps_nothing_after_a_crash_before_its_id_was_remembered_and_an_expiry(tmp_path, enforcers):
    # as above, and the cap expires while the enforcer is down: the restart lifts it, and the
    # replay of its incident (well under stale_after_s old) must not cap again
    a, e, rec = capped_by_an_incident(tmp_path, enforcers, duration=2)
    e.stop(signal.SIGKILL)
    os.remove(os.path.join(e.state, "seen-ids"))
    time.sleep(2.5)
    e.start()
    assert read_limit(a) == "max 100000" and "RELEASED batch/a (RECOVERY" in e.log()
    produce("cpi2.incidents", e.host, wire.encode("Incident", rec))
    stack.wait_until(lambda: "replayed incident" in e.log(), 20, "the replay to be refused")
    assert read_limit(a) == "max 100000"
    assert e.log().count("APPLIED batch/a") == 1


def test_a_limit_the_kubelet_changes_under_a_cap_is_neither_fought_nor_undone(tmp_path, enforcers):
    # the kubelet writes a pod's limit at its start and at an in-place resize, a cap or not
    root = str(tmp_path / "cg")
    pod = cgroup(root, "kubepods/burstable/pod-resized", "200000 100000")
    e = start(enforcers, tmp_path, root, "--limit-check-s", "1")
    c = Actions(e.host)

    def write(limit):
        with open(os.path.join(pod, "cpu.max"), "w") as f:
            f.write(limit + "\n")

    def released(got):
        return [a for a in kinds(got, "RELEASED") if "another writer" in a["reason"]]

    def holds(limit, seconds):
        end = time.time() + seconds
        while time.time() < end:
            assert read_limit(pod) == limit
            time.sleep(0.05)

    try:
        # while the enforcer runs: its periodic check (every second) drops the cap
        send_incident(e.host, "kubepods/burstable/pod-resized", cap_duration_s=3)
        stack.wait_until(lambda: read_limit(pod) == "25000 250000", 20, "the cap")
        write("150000 100000")  # an in-place resize to 1.5 CPU
        got = c.collect(10, until=released)
        gone = released(got)
        assert len(gone) == 1 and gone[0]["cause"] == "EXPIRY", got
        assert gone[0]["previous_limit"] is None, gone[0]
        assert "was 25000 250000 (the cap), now 150000 100000" in gone[0]["reason"], gone[0]
        assert "200000 100000" in gone[0]["reason"]  # the stale limit, named, not restored
        holds("150000 100000", 3.5)  # past the cap's own expiry: nothing written
        assert not [a for a in c.collect(1) if a.get("kind") in ("RELEASED", "FAILED")]

        # while it is down (kill -9): the restart drops the cap, writes nothing
        send_incident(e.host, "kubepods/burstable/pod-resized", cap_duration_s=3)
        stack.wait_until(lambda: read_limit(pod) == "25000 250000", 20, "the second cap")
        e.stop(signal.SIGKILL)
        write("5000 250000")  # lowered further than the cap: left there too
        e.start()
        got = c.collect(10, until=lambda g: [a for a in released(g) if a["cause"] == "RECOVERY"])
        gone = [a for a in released(got) if a["cause"] == "RECOVERY"]
        assert len(gone) == 1 and "now 5000 250000" in gone[0]["reason"], got
        assert "150000 100000, not restored" in gone[0]["reason"], gone[0]
        holds("5000 250000", 3.5)
        assert not open(os.path.join(e.state, e.host + ".caps")).read().count("cap3\t")
    finally:
        c.close()


def test_only_the_cgroups_of_the_enforce_file_are_capped_and_it_is_reread(tmp_path, enforcers):
    # per-namespace opt-in: cpi2-k8s-identity lists the cgroups of the namespaces that enforce
    root = str(tmp_path / "cg")
    shop, other = cgroup(root, "kubepods/burstable/pod-shop"), cgroup(root, "kubepods/burstable/pod-other")
    listing = tmp_path / "enforce"

    def write(*paths):  # replaced whole, as the identity component does
        tmp = tmp_path / "enforce.tmp"
        tmp.write_text("# cgroups that may be capped\n" + "".join(p + "\n" for p in paths))
        os.rename(tmp, listing)

    write("kubepods/burstable/pod-shop")
    e = start(enforcers, tmp_path, root, "--enforce-file", str(listing))
    refused = first_refusal(e, "kubepods/burstable/pod-other")
    assert "not opted in: kubepods/burstable/pod-other is not among the 1 cgroups" in refused["reason"], refused
    assert read_limit(other) == "max 100000"
    send_incident(e.host, "kubepods/burstable/pod-shop")
    stack.wait_until(lambda: read_limit(shop) == "25000 250000", 20, "the opted-in pod's cap")
    # its namespace opts in: the file is read again at the next incident
    write("kubepods/burstable/pod-shop", "kubepods/burstable/pod-other")
    send_incident(e.host, "kubepods/burstable/pod-other")
    stack.wait_until(lambda: read_limit(other) == "25000 250000", 20, "the cap once opted in")
    assert "enforce_file %s: 2 cgroups may be capped" % listing in e.log()


def test_a_new_consumer_group_starts_at_the_latest_offset(tmp_path, enforcers):
    root = str(tmp_path / "cg")
    old, new = cgroup(root, "batch/old"), cgroup(root, "batch/new")
    e = Enforcer(tmp_path, root)
    send_incident(e.host, "batch/old", cap_duration_s=600)  # in Kafka before the enforcer's first start
    e.start()  # returns once an uncap produced after the start was read
    enforcers.append(e)
    send_incident(e.host, "batch/new")
    stack.wait_until(lambda: read_limit(new) == "25000 250000", 20, "an incident produced after the start")
    time.sleep(1)
    assert read_limit(old) == "max 100000"


def test_the_rate_limit_refuses_a_flood_of_new_caps(tmp_path, enforcers):
    root = str(tmp_path / "cg")
    dirs = [cgroup(root, "flood/t%d" % i) for i in range(20)]
    e = start(enforcers, tmp_path, root, "--max-caps", "64")
    c = Actions(e.host)
    t0 = time.time()
    p = Producer(kafka_conf("admin"))
    for i in range(20):
        rec = incident(e.host, "flood/t%d" % i, 0.1, 600)
        p.produce("cpi2.incidents", key=e.host, value=wire.encode("Incident", rec))
    assert p.flush(10) == 0
    got = c.collect(5)  # the refusals are sampled: at most 10 a minute are published
    elapsed = time.time() - t0
    applied = kinds(got, "APPLIED")
    assert len(applied) <= 5 + int(elapsed) + 1, (len(applied), elapsed)
    assert any("rate limit" in a["reason"] for a in kinds(got, "REFUSED")), got
    assert sum(read_limit(d) != "max 100000" for d in dirs) == len(applied)
    c.close()


def test_another_hosts_message_is_skipped_by_its_key_and_a_large_one_refused_undecoded(tmp_path, enforcers):
    root = str(tmp_path / "cg")
    a = cgroup(root, "batch/a")
    e = start(enforcers, tmp_path, root)
    # junk keyed for another host: not decoded, so not refused (the enforcer logs each refusal
    # with its topic, partition and offset; other enforcers may be running, so its log decides)
    junk = produce("cpi2.incidents", "elsewhere-" + e.host, b"\xc3\x01 not an incident" * 1000)
    big = incident(e.host, "batch/a")
    big["suspects"] = big["suspects"] * 26000  # a valid Incident of about 860 kB, for this host
    payload = wire.encode("Incident", big)
    assert len(payload) > 800_000
    large = produce("cpi2.incidents", e.host, payload)
    send_incident(e.host, "batch/a", cap_cpu=0.2)
    stack.wait_until(lambda: read_limit(a) == "50000 250000", 20, "the small incident after the large one")
    refused = [line for line in e.log().splitlines() if "refused message cpi2.incidents" in line]
    assert any("[%d]@%d: " % large in line and "max_message_bytes" in line for line in refused), refused
    assert not any("[%d]@%d: " % junk in line for line in refused), refused


def test_a_host_name_with_a_nul_byte_is_not_this_host(tmp_path, enforcers):
    root = str(tmp_path / "cg")
    a, b = cgroup(root, "batch/a"), cgroup(root, "batch/b")
    e = start(enforcers, tmp_path, root)
    rec = incident(e.host + "\0evil", "batch/a")
    produce("cpi2.incidents", None, wire.encode("Incident", rec))
    send_incident(e.host, "batch/b")
    stack.wait_until(lambda: read_limit(b) == "25000 250000", 20, "the genuine incident's cap")
    time.sleep(1)
    assert read_limit(a) == "max 100000"


def test_control_characters_in_ids_are_refused_and_never_reach_the_log(tmp_path, enforcers):
    root = str(tmp_path / "cg")
    a = cgroup(root, "batch/a")
    e = start(enforcers, tmp_path, root)
    produce("cpi2.control", "*", command("PROTECTION_ON", None, cid="x\nFAKE-LINE forged by a message"))
    send_incident(e.host, "batch/a", incident_id="y\rFAKE-LINE\x1b[2J")
    send_incident(e.host, "batch/a")
    stack.wait_until(lambda: read_limit(a) == "25000 250000", 20, "the genuine incident's cap")
    time.sleep(1)
    lines = e.log().replace("\r", "\n").split("\n")
    assert not any(line.startswith("FAKE-LINE") for line in lines), e.log()
    assert "\x1b" not in e.log()


def test_the_cluster_kill_switch_survives_kill_9(tmp_path, enforcers):
    root = str(tmp_path / "cg")
    a = cgroup(root, "batch/a")
    # latest, said explicitly: the restarted enforcer must know the switch from its state
    # folder, not by reading the command again from Kafka
    e = start(enforcers, tmp_path, root, "-X", "auto.offset.reset=latest")
    produce("cpi2.control", "*", command("PROTECTION_OFF", None))
    stack.wait_until(lambda: "cluster command" in e.log(), 20, "the cluster command")
    e.stop(signal.SIGKILL)
    e.start()
    assert first_refusal(e, "batch/a")["cause"] == "PROTECTION_OFF"
    assert read_limit(a) == "max 100000"
    produce("cpi2.control", "*", command("PROTECTION_ON", None))


def test_200_caps_are_all_restored_exactly_on_sigterm(tmp_path, enforcers):
    root = str(tmp_path / "cg")
    limits = {}
    for i in range(200):
        limits["many/t%d" % i] = "max 100000" if i % 3 == 0 else "%d %d" % (20000 + 1000 * i, 100000 + 1000 * (i % 50))
    dirs = {t: cgroup(root, t, lim) for t, lim in limits.items()}
    e = start(enforcers, tmp_path, root, "--max-caps", "256", "--cap-rate-per-s", "1000", "--cap-burst", "1000")
    p = Producer(kafka_conf("admin"))
    for t in limits:
        p.produce("cpi2.control", key=e.host, value=command("CAP", e.host, t, cap=0.01, duration=600))
    assert p.flush(10) == 0
    stack.wait_until(lambda: all(read_limit(d) == "2500 250000" for d in dirs.values()), 60, "200 caps in force")
    assert e.stop() == 0
    wrong = {t: read_limit(d) for t, d in dirs.items() if read_limit(d) != limits[t]}
    assert not wrong, "%d of 200 limits not restored, e.g. %s" % (len(wrong), list(wrong.items())[:3])


def test_a_malformed_state_line_is_skipped_and_every_other_cap_lifted(tmp_path, enforcers):
    root = str(tmp_path / "cg")
    a = cgroup(root, "batch/a", "25000 250000")  # capped by a run that crashed
    e = Enforcer(tmp_path, root)
    os.makedirs(e.state)
    with open(os.path.join(e.state, e.host + ".caps"), "w") as f:
        f.write("cap\tbatch/x\tnot a valid line\n")
        f.write("cap\tbatch/a\t%s\t2\tmax 100000\t0.100000\t250000\t1\tinc\tv\n" % os.path.realpath(a))
    e.start()
    enforcers.append(e)
    stack.wait_until(lambda: read_limit(a) == "max 100000", 20, "the cap of the good line to be lifted")
    assert ":1: malformed line skipped" in e.log()
    assert e.proc.poll() is None


def test_a_second_enforcer_on_the_same_state_folder_is_refused(tmp_path, enforcers):
    root = str(tmp_path / "cg")
    cgroup(root, "batch/a")
    first = Enforcer(tmp_path, root).start()
    enforcers.append(first)
    second = Enforcer(tmp_path, root, host=first.host + "-2", state=first.state).start(wait=False)
    enforcers.append(second)
    assert second.proc.wait(30) == 1
    assert "in use by another cpi2-enforcer (pid %d" % first.proc.pid in second.log(), second.log()


def test_capabilities_are_dropped_after_start(tmp_path, enforcers):
    root = str(tmp_path / "cg")
    cgroup(root, "batch/a")
    e = start(enforcers, tmp_path, root)
    time.sleep(1)  # librdkafka's threads are up
    statuses = [open(p).read() for p in glob.glob("/proc/%d/task/*/status" % e.proc.pid)]
    assert len(statuses) > 1
    for s in statuses:
        fields = dict(line.split(":", 1) for line in s.splitlines() if ":" in line)
        for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
            assert int(fields[cap].strip(), 16) == 0, (cap, fields[cap])
        assert fields["NoNewPrivs"].strip() == "1"
    assert "capabilities kept: none" in e.log()


def _survives_sighup(cmd, logpath, stopped_ok):
    with open(logpath, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        time.sleep(2)
        assert proc.poll() is None, open(logpath).read()
        proc.send_signal(signal.SIGHUP)
        time.sleep(1.5)
        assert proc.poll() is None, "SIGHUP killed %s:\n%s" % (cmd[0], open(logpath).read()[-2000:])
        assert "SIGHUP ignored" in open(logpath).read()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) in stopped_ok
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sighup_is_ignored_by_the_enforcer_the_collector_and_fleetsim(tmp_path, enforcers):
    root = str(tmp_path / "cg")
    a = cgroup(root, "batch/a")
    e = start(enforcers, tmp_path, root)
    send_incident(e.host, "batch/a")
    stack.wait_until(lambda: read_limit(a) == "25000 250000", 20, "the cap")
    e.proc.send_signal(signal.SIGHUP)
    stack.wait_until(lambda: "SIGHUP ignored" in e.log() or e.proc.poll() is not None, 10, "the SIGHUP log line")
    assert e.proc.poll() is None and read_limit(a) == "25000 250000"
    assert e.stop() == 0 and read_limit(a) == "max 100000"

    tasks = str(tmp_path / "tasks")
    os.makedirs(os.path.join(tasks, "a"))
    _survives_sighup(
        [COLLECTOR, "--dry-run", "--events", "task-clock", "--roots", tasks, "--window-s", "0.2", "--period-s", "1"],
        str(tmp_path / "collector.log"),
        (0,),
    )
    _survives_sighup(
        [FLEETSIM, "-s", "case1", "--dry-run", "--speed", "60", "--warmup", "0", "--duration", "1h", "--truth", "none"],
        str(tmp_path / "fleetsim.log"),
        (0, 1),
    )


def test_a_kafka_key_naming_another_served_host_than_the_message_is_refused(tmp_path, enforcers):
    # simulation: one enforcer serves hosts x and y (folders of --sim-hosts-root)
    sim = str(tmp_path / "sim")
    host = "hostile-" + uuid.uuid4().hex[:8]
    x, y = host + "-x", host + "-y"
    ya = cgroup(os.path.join(sim, y), "batch/a")
    cgroup(os.path.join(sim, x), "batch/a")
    e = start(enforcers, tmp_path, sim, "--sim-hosts-root", sim, host=x)
    send_incident(y, "batch/a", key=x)  # keyed for x, naming y
    stack.wait_until(lambda: "different hosts" in e.log(), 20, "the mismatch to be refused")
    time.sleep(0.5)
    assert read_limit(ya) == "max 100000"


def test_one_host_reserves_no_memory_for_4096(tmp_path, enforcers):
    # The cap records of one host take about 1.4 MB; librdkafka's threads reserve their stacks.
    # Records were reserved for SIM_MAX_HOSTS (4096) hosts whatever the number served (7 GB).
    root = str(tmp_path / "cg")
    cgroup(root, "batch/a")
    e = start(enforcers, tmp_path, root)
    status = dict(line.split(":", 1) for line in open("/proc/%d/status" % e.proc.pid).read().splitlines())
    peak_mb = int(status["VmPeak"].split()[0]) / 1024
    assert peak_mb < 1024, "one host's enforcer reserved %.0f MB of virtual memory" % peak_mb


def test_caps_lifted_on_a_full_disk_never_come_back(tmp_path, enforcers):
    # The state folder on a tmpfs of its own, filled up before SIGTERM: the state file cannot be
    # rewritten at the releases. They were lifted, then resumed at the restart until their
    # expiry; the release journal (its space written at start) now records them.
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tmpfs for the state folder")
    fs = tmp_path / "state-fs"
    fs.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(fs)], capture_output=True)
    if r.returncode:
        pytest.skip("cannot mount a tmpfs: %s" % r.stderr.decode(errors="replace").strip())
    try:
        root = str(tmp_path / "cg")
        dirs = [cgroup(root, "batch/t%d" % i) for i in range(3)]
        e = start(enforcers, tmp_path, root, state=str(fs / "state"))
        for i in range(3):
            send_incident(e.host, "batch/t%d" % i, cap_duration_s=600)
        stack.wait_until(lambda: all(read_limit(d) == "25000 250000" for d in dirs), 20, "three caps")
        with open(fs / "fill", "wb") as f:  # the disk full
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass
        assert e.stop() == 0
        assert [read_limit(d) for d in dirs] == ["max 100000"] * 3, e.log()[-3000:]
        assert e.log().count("release journal holds the release") == 3, e.log()[-3000:]
        os.unlink(fs / "fill")  # space again
        e.start()
        stack.wait_until(lambda: e.log().count("(RECOVERY") >= 3, 20, "the restart to finish the releases")
        time.sleep(1)
        assert [read_limit(d) for d in dirs] == ["max 100000"] * 3, e.log()[-3000:]
        assert "cap resumed after restart" not in e.log()
    finally:
        for e in enforcers:
            e.stop(signal.SIGKILL)
        subprocess.run(["umount", str(fs)], check=True)
