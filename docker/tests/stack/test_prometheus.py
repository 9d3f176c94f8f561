"""A real Prometheus (Debian's) scrapes every component of the local stack that serves metrics,
and answers queries for each one's series:

- cpi2-collector (--metrics-address): its windows on this host's cgroup v2 tree (--dry-run);
- cpi2-enforcer: its poll of the stack's Kafka, on a cgroup tree of the test's;
- cpi2-k8s-identity: its syncs of a node's pods from a real kube-apiserver (k8s's tools);
- Flink's JobManager and TaskManager: the Prometheus reporter of stack/flink/config.yaml.in.

The programs are the project's builds (build/c, build/k8s); make -C docker deps installs
prometheus.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import urllib.parse
import urllib.request
import uuid

import pytest
import yaml

from cpi2.testing import kube, stack

ROOT = stack.ROOT
C_BUILD = os.path.join(ROOT, "build", "c")
COLLECTOR = os.path.join(C_BUILD, "collectors", "collector", "cpi2-collector")
ENFORCER = os.path.join(C_BUILD, "enforcer", "cpi2-enforcer")
IDENTITY = os.path.join(ROOT, "build", "k8s", "cpi2-k8s-identity")
V2 = "/sys/fs/cgroup/unified"
TAG = "prom-" + uuid.uuid4().hex[:6]


def flink_metrics_ports():
    """The ports of Flink's Prometheus reporter, from the stack's rendered Flink configuration."""
    conf = yaml.safe_load(open(os.path.join(stack.STACK_DIR, "flink", "conf", "config.yaml")))
    low, _, high = str(conf["metrics"]["reporter"]["prom"]["port"]).partition("-")
    return list(range(int(low), int(high or low) + 1))


class Process:
    """A program of the test, its log in a file; the port its metrics server took (port 0)."""

    def __init__(self, tmp, name, args, env=None):
        self.log = open(os.path.join(tmp, name + ".log"), "w+")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=env)

    def text(self):
        self.log.seek(0)
        return self.log.read()

    def port(self):
        def found():
            t = self.text()  # the C agents say "(port N)", the identity agent "on HOST:N,"
            m = re.search(r"\(port (\d+)\)", t) or re.search(r"serving /metrics and /healthz on \S*:(\d+),", t)
            if not m and self.proc.poll() is not None:
                pytest.fail("exited %s before serving its metrics:\n%s" % (self.proc.returncode, t))
            return m

        return int(stack.wait_until(found, 60, "a metrics server").group(1))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def query(base, promql):
    """The result vector of an instant query."""
    url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]["result"]


@pytest.fixture(scope="module")
def programs():
    if not shutil.which("prometheus"):
        pytest.fail("prometheus is missing: make -C docker deps installs Debian's")
    subprocess.run(["make", "--no-print-directory", "-s", "-C", os.path.join(ROOT, "enforcer"), "build"], check=True)
    subprocess.run(["make", "--no-print-directory", "-s", "-C", os.path.join(ROOT, "k8s"), "build"], check=True)
    stack.ensure_up()


def test_prometheus_scrapes_every_component(programs, tmp_path):
    if kube.missing():
        pytest.skip(kube.missing())
    if not os.path.isdir(V2):
        pytest.skip("no cgroup v2 tree at %s for the collector" % V2)
    tmp = str(tmp_path)
    cg = tmp_path / "cg" / "batch" / "a"
    cg.mkdir(parents=True)
    (cg / "cpu.max").write_text("max 100000\n")
    started = []
    with kube.APIServer() as api:
        api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
        try:
            collector = Process(tmp, "collector", [
                COLLECTOR, "--dry-run", "--events", "task-clock", "--roots", V2, "--max-depth", "2",
                "--window-s", "1", "--period-s", "1", "--host", TAG, "--metrics-address", "127.0.0.1:0"])  # fmt: skip
            started.append(collector)
            enforcer = Process(tmp, "enforcer", [
                ENFORCER, "--host", TAG, "--cgroup-root", str(tmp_path / "cg"), "--state-dir", tmp + "/state",
                "--brokers", stack.KAFKA, "--group-id", "cpi2-enforcer-" + TAG, "--metrics-address", "127.0.0.1:0",
                *stack.agent_kafka_args("enforcer")])  # fmt: skip
            started.append(enforcer)
            identity = Process(tmp, "identity", [
                IDENTITY, "--kubeconfig", api.kubeconfig(), "--node", TAG + "-node", "--cgroup-driver", "cgroupfs",
                "--labels-file", tmp + "/labels", "--resync", "1s", "--metrics-address", "127.0.0.1:0"])  # fmt: skip
            started.append(identity)
            targets = {
                "collector": ["127.0.0.1:%d" % collector.port()],
                "enforcer": ["127.0.0.1:%d" % enforcer.port()],
                "identity": ["127.0.0.1:%d" % identity.port()],
                "flink": ["%s:%d" % (stack.HOST, p) for p in flink_metrics_ports()],
            }
            port = kube.free_port()
            conf = {
                "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
                "scrape_configs": [{"job_name": j, "static_configs": [{"targets": t}]} for j, t in targets.items()],
            }
            (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(conf))
            prom = Process(tmp, "prometheus", [
                "prometheus", "--config.file", tmp + "/prometheus.yml", "--storage.tsdb.path", tmp + "/tsdb",
                "--web.listen-address", "127.0.0.1:%d" % port])  # fmt: skip
            started.append(prom)
            base = "http://127.0.0.1:%d" % port
            want = {
                "collector": 'cpi2_collector_windows_total{job="collector"} > 0',
                "enforcer": 'cpi2_enforcer_caps_in_force{job="enforcer"} == 0',
                "enforcer histogram": 'cpi2_enforcer_incident_to_cap_seconds_count{job="enforcer"}',
                "identity": 'cpi2_identity_syncs_total{job="identity",result="ok"} > 0',
                "agents' own CPU": 'count(process_cpu_seconds_total{job=~"collector|enforcer|identity"}) == 3',
                "build info": 'count(cpi2_build_info{job=~"collector|enforcer|identity"}) == 3',
                "Flink JobManager": 'flink_jobmanager_numRegisteredTaskManagers{job="flink"} >= 1',
                "Flink TaskManager": 'flink_taskmanager_Status_JVM_CPU_Load{job="flink"}',
            }
            missing = dict(want)

            def all_found():
                for what, promql in list(missing.items()):
                    try:
                        if query(base, promql):
                            del missing[what]
                    except OSError:
                        return False  # Prometheus not listening yet
                return not missing

            stack.wait_until(all_found, 120, "every component's series in Prometheus")
            up = {r["metric"]["job"] + " " + r["metric"]["instance"]: r["value"][1] for r in query(base, "up")}
            assert all(
                up["%s %s" % (j, t)] == "1" for j in ("collector", "enforcer", "identity") for t in targets[j]
            ), up
            assert sum(up["flink " + t] == "1" for t in targets["flink"]) >= 2, up  # the JobManager and a TaskManager
        except Exception:
            for p in started:
                print("--- %s\n%s" % (p.log.name, p.text()[-3000:]))
            raise
        finally:
            for p in reversed(started):
                p.stop()
    assert enforcer.proc.returncode == 0 and collector.proc.returncode == 0
