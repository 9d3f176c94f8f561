"""The host agents run from the images make images builds, against the local stack, with podman
(docker/images.sh's storage): as the chart runs them, the host's cgroup tree mounted at
/host/cgroup, every capability dropped but the collector's PERFMON, no privilege to gain.

- cpi2/collectors: samples of this host's cgroups in cpi2.samples, under a host name of the test's.
- cpi2/enforcer: an operator's CAP on a real task cgroup of cgroup v1's cpu controller is written
  into the kernel's files, then lifted when it ends, the limits found back.
- cpi2/k8s-identity: the labels file of a node's pods, read from a real kube-apiserver (the image
  runs as uid 65532 with nothing but the binary).
"""

import json
import os
import subprocess
import time
import uuid

import pytest
import yaml
from confluent_kafka import Consumer, Producer, TopicPartition

from cpi2.schemas import wire
from cpi2.testing import kube, stack

ROOT = stack.ROOT
IMAGES = os.path.join(ROOT, "docker", "images.sh")
VERSION = yaml.safe_load(open(os.path.join(ROOT, "deploy", "helm", "cpi2", "Chart.yaml")))["appVersion"]
V1_CPU = "/sys/fs/cgroup/cpu"  # cgroup v1's cpu controller: where limits are written on this machine
V2 = "/sys/fs/cgroup/unified"  # the cgroup v2 tree the collector walks here
TAG = "images-" + uuid.uuid4().hex[:8]  # names of this run: containers, hosts, cgroups
STARTED = []


def podman_env():
    out = subprocess.run([IMAGES, "--env"], capture_output=True, text=True, check=True).stdout
    env = dict(os.environ)
    for word in out.split()[1:]:
        k, v = word.split("=", 1)
        env[k] = v
    return env


@pytest.fixture(scope="module")
def podman():
    """Builds the agents' images (layers cached: quick when nothing changed); returns a runner."""
    r = subprocess.run(
        ["nice", IMAGES, "collectors", "enforcer", "k8s-identity"], capture_output=True, text=True, timeout=1800
    )
    assert r.returncode == 0, r.stdout + r.stderr
    print(r.stdout)
    env = podman_env()
    stack.ensure_up()

    def run(*args, **kw):
        return subprocess.run(
            ["podman", *args], env=env, capture_output=True, text=True, timeout=kw.pop("timeout", 120), **kw
        )

    yield run
    for name in STARTED:
        run("rm", "-f", "-t", "2", name)


def secrets_mount():
    return ["-v", "%s:%s:ro" % (stack.SECRETS_DIR, stack.SECRETS_DIR)]


def agent(podman, name, image, args, extra=()):
    """podman run -d of an agent as the chart's pod runs it; its container name."""
    cname = "%s-%s" % (TAG, name)
    STARTED.append(cname)
    r = podman(
        "run", "-d", "--name", cname, "--pid", "host", "--cgroupns", "host", "--network", "host",
        "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--read-only", *extra,
        *secrets_mount(), "cpi2/%s:%s" % (image, VERSION), *args,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return cname


def logs(podman, cname):
    r = podman("logs", cname)
    return r.stdout + r.stderr


def at_end(topic):
    """A consumer (admin) assigned to every partition of TOPIC at its end: it reads what comes next."""
    c = Consumer(stack.kafka_conf("admin", **{"group.id": TAG, "enable.auto.commit": False}))
    parts = c.list_topics(topic, timeout=20).topics[topic].partitions
    tps = []
    for p in parts:
        lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=20)
        tps.append(TopicPartition(topic, p, hi))
    c.assign(tps)
    return c


def perfmon_seccomp(tmp_path):
    """The default seccomp profile of this podman (Debian 12's containers-common 0.50) with
    perf_event_open allowed to CAP_PERFMON as well as CAP_SYS_ADMIN. As installed it allows the
    call only with CAP_SYS_ADMIN: the collector with PERFMON alone logged 'perf event task-clock
    cannot be counted here: Operation not permitted'. Kubernetes' RuntimeDefault is the runtime's
    own profile (docker/README.md)."""
    with open("/usr/share/containers/seccomp.json") as f:
        profile = json.load(f)
    rules = [r for r in profile["syscalls"] if "perf_event_open" in r["names"]]
    assert any(r.get("includes", {}).get("caps") == ["CAP_SYS_ADMIN"] for r in rules), rules
    for r in rules:  # its rules (allowed with SYS_ADMIN, refused without) give way to two allowances
        r["names"].remove("perf_event_open")
    for cap in ("CAP_SYS_ADMIN", "CAP_PERFMON"):
        profile["syscalls"].append(
            {"names": ["perf_event_open"], "action": "SCMP_ACT_ALLOW", "includes": {"caps": [cap]}}
        )
    path = tmp_path / "seccomp-perfmon.json"
    path.write_text(json.dumps(profile))
    return str(path)


def test_default_seccomp_profile_refuses_perf_to_perfmon(podman):
    """Why the collector runs under perfmon_seccomp here: with PERFMON alone and this podman's
    default profile, perf_event_open is refused (this fails once Debian's profile allows it)."""
    r = podman(
        "run", "--rm", "--pid", "host", "--cgroupns", "host", "--cap-drop", "ALL", "--cap-add", "PERFMON",
        "-v", V2 + ":/host/cgroup:ro", "cpi2/collectors:" + VERSION,
        "--once", "--roots", "/host/cgroup", "--max-depth", "1", "--events", "task-clock", "--resctrl", "", "--window-s", "1",
    )  # fmt: skip
    assert r.returncode != 0 and "task-clock cannot be counted here: Operation not permitted" in r.stderr, r.stderr


def test_collector_image_publishes_samples_of_this_host(podman, tmp_path):
    host = TAG + "-collector"
    c = at_end("cpi2.samples")
    try:
        name = agent(
            podman, "collector", "collectors",
            ["--host", host, "--brokers", stack.KAFKA, "--kafka-client-file", stack.kafka_client_file("collector"),
             "--roots", "/host/cgroup", "--max-depth", "2", "--events", "task-clock", "--resctrl", "",
             "--window-s", "1", "--period-s", "2", "--windows", "2"],
            ["--cap-add", "PERFMON", "--security-opt", "seccomp=" + perfmon_seccomp(tmp_path), "-v", V2 + ":/host/cgroup:ro"],
        )  # fmt: skip
        samples, deadline = [], time.time() + 60
        while time.time() < deadline and not samples:
            m = c.poll(1.0)
            if m is not None and not m.error() and m.key() == host.encode():
                samples.append(wire.decode("CpiSample", m.value()))
        assert samples, "no sample of %s in cpi2.samples within 60 s; the collector's log:\n%s" % (
            host,
            logs(podman, name),
        )
        s = samples[0]
        assert s["host"] == host and s["task"] and s["cpu_usage"] is not None, s
    finally:
        c.close()


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read().strip()


@pytest.fixture
def task_cgroup():
    """A real task cgroup two levels below the v1 cpu root (the enforcer's --task-cgroup-depth 2)."""
    if not os.path.isdir(V1_CPU):
        pytest.skip("no cgroup v1 cpu controller at %s" % V1_CPU)
    parent = os.path.join(V1_CPU, TAG)
    task = os.path.join(parent, "task")
    os.makedirs(task)
    yield task
    for d in (task, parent):
        for _ in range(50):
            try:
                os.rmdir(d)
                break
            except OSError:
                time.sleep(0.2)


def control(kind, host, task, cap=None, duration=None):
    record = {
        "command_id": "%s-%s" % (TAG, uuid.uuid4().hex[:8]),
        "issued_at_us": int(time.time() * 1e6),
        "command": kind,
        "host": host,
        "task": task,
        "cap_cpu": cap,
        "duration_s": duration,
        "operator": "docker-tests",
        "reason": "the enforcer's image",
    }
    p = Producer(stack.kafka_conf("admin"))
    p.produce("cpi2.control", key=host, value=wire.encode("ControlCommand", record))
    assert p.flush(20) == 0


def test_enforcer_image_caps_and_releases_a_real_cgroup(podman, task_cgroup, tmp_path):
    host = TAG + "-enforcer"
    rel = os.path.relpath(task_cgroup, V1_CPU)
    found = {f: read(os.path.join(task_cgroup, f)) for f in ("cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.shares")}
    assert found["cpu.cfs_quota_us"] == "-1"
    state = tmp_path / "state"
    state.mkdir()
    name = agent(
        podman, "enforcer", "enforcer",
        ["--host", host, "--brokers", stack.KAFKA, "--kafka-client-file", stack.kafka_client_file("enforcer"),
         "--cgroup-root", "/host/cgroup", "--task-cgroup-depth", "2", "--state-dir", "/var/lib/cpi2-enforcer",
         "--group-id", "cpi2-enforcer-" + TAG],
        ["-v", V1_CPU + ":/host/cgroup", "-v", "%s:/var/lib/cpi2-enforcer" % state],
    )  # fmt: skip
    stack.wait_until(lambda: "serving" in logs(podman, name), 60, "the enforcer to serve")
    # its consumer starts at the end: probe with uncaps of no cgroup until one is refused in its log
    probes = []

    def joined():
        probes.append("no/such/probe-" + uuid.uuid4().hex[:6])
        control("UNCAP", host, probes[-1])
        return any(p in logs(podman, name) for p in probes)

    stack.wait_until(joined, 60, "the enforcer's consumer to join", interval=1)
    control("CAP", host, rel, cap=0.1, duration=6)
    quota = os.path.join(task_cgroup, "cpu.cfs_quota_us")
    stack.wait_until(lambda: read(quota) != "-1", 20, "the cap in %s" % quota)
    capped = {f: read(os.path.join(task_cgroup, f)) for f in ("cpu.cfs_quota_us", "cpu.cfs_period_us")}
    assert int(capped["cpu.cfs_quota_us"]) / int(capped["cpu.cfs_period_us"]) == pytest.approx(0.1, rel=0.01), capped
    stack.wait_until(lambda: read(quota) == "-1", 30, "the cap lifted when it ends")
    after = {f: read(os.path.join(task_cgroup, f)) for f in found}
    assert after == found, "the limits found are back"
    text = logs(podman, name)
    assert rel in text and "capabilities kept: none" in text, text


def test_identity_image_writes_the_labels_of_its_nodes_pods(podman, tmp_path):
    if kube.missing():
        pytest.skip(kube.missing())
    node = TAG + "-node"
    out = tmp_path / "out"
    out.mkdir()
    os.chmod(out, 0o777)  # the image's uid 65532 writes there
    with kube.APIServer() as api:
        api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
        spec = {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "registry.invalid/web:1"}]}}}  # fmt: skip
        apps = "/apis/apps/v1/namespaces/shop/"
        dep = api.create(
            apps + "deployments",
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": spec},
        )
        rs = api.create(apps + "replicasets", {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                               "metadata": {"name": "web-5d9c", "ownerReferences": [kube.owner(dep)]}, "spec": spec})  # fmt: skip
        pod = api.create("/api/v1/namespaces/shop/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-5d9c-x1", "labels": {"app": "web"}, "ownerReferences": [kube.owner(rs)]},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "registry.invalid/web:1", "resources": kube.resources("Burstable")}]}})  # fmt: skip
        kubeconfig = api.kubeconfig()
        os.chmod(kubeconfig, 0o644)
        r = podman(
            "run", "--rm", "--network", "host", "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--read-only",
            "-v", "%s:/etc/cpi2/kubeconfig:ro" % kubeconfig, "-v", "%s:/run/cpi2" % out,
            "cpi2/k8s-identity:" + VERSION, "--kubeconfig", "/etc/cpi2/kubeconfig", "--node", node,
            "--cgroup-driver", "cgroupfs", "--labels-file", "/run/cpi2/labels", "--once", timeout=120,
        )  # fmt: skip
        assert r.returncode == 0, r.stdout + r.stderr
    lines = (out / "labels").read_text().splitlines()
    uid = pod["metadata"]["uid"]
    mine = [line.split() for line in lines if uid in line or uid.replace("-", "_") in line]
    assert mine, lines
    assert any(f[1] == "shop/deployment/web" for f in mine), mine
