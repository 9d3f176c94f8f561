"""Helpers for tests over the real local stack: find it running or start it, and talk to it."""

import os
import subprocess
import time

from cpi2 import repo
from cpi2.repo import read_client_file  # one reader of client files, mode checked
from cpi2.schemas import avroschemas

ROOT = str(repo.ROOT)
ENV_PATH = str(repo.STACK_ENV)


def env():
    """stack/stack.env (or $STACK_ENV) as a dict: the one file with the stack's ports."""
    return repo.read_env(ENV_PATH, missing_ok=False)


E = env()
HOST = E["STACK_HOST"]
# Every broker (one on the single-node stack): the agents' --brokers, the clients' bootstrap.servers
KAFKA = repo.kafka_bootstrap(E)
FLINK = "http://%s:%s" % (HOST, E["FLINK_REST_PORT"])
CLICKHOUSE = "http://%s:%s" % (HOST, E["CLICKHOUSE_HTTP_PORT"])
STACK_DIR = str(repo.STACK_DIR)
SECRETS_DIR = os.path.join(STACK_DIR, "secrets")


def kafka_client_file(principal="admin"):
    """The client file of a Kafka principal, or None when the stack made no secrets."""
    return repo.kafka_client_file(principal)


def kafka_conf(principal="admin", **extra):
    """A confluent-kafka configuration for principal: bootstrap.servers plus its client file's
    properties; plain {"bootstrap.servers": KAFKA} when the stack has no secrets."""
    conf = {"bootstrap.servers": KAFKA}
    path = kafka_client_file(principal)
    if path:
        conf.update(read_client_file(path))
    conf.update(extra)
    return conf


def agent_kafka_args(principal):
    """Extra command-line arguments that give a C agent (collector, fleetsim, enforcer) the
    principal's client file; [] when the stack has no secrets."""
    path = kafka_client_file(principal)
    return ["--kafka-client-file", path] if path else []


def status():
    return subprocess.run([os.path.join(ROOT, "stack", "status.sh")], capture_output=True, text=True)


def ensure_up():
    """Find the stack healthy, or start it with make up (bounded by up.sh's own waits)."""
    if status().returncode == 0:
        return
    r = subprocess.run(["make", "-C", ROOT, "--no-print-directory", "up"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, "make up failed:\n" + r.stdout + r.stderr


def pids():
    """{server: pid} of the servers whose pid files exist."""
    out = {}
    run = os.path.join(STACK_DIR, "run")
    for fn in os.listdir(run) if os.path.isdir(run) else []:
        if fn.endswith(".pid"):
            with open(os.path.join(run, fn)) as f:
                out[fn[:-4]] = int(f.read().strip())
    return out


def wait_until(pred, timeout, what, interval=0.5):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError("timed out after %ss waiting for %s (last: %r)" % (timeout, what, last))


def kill_server(name):
    """kill -9 one of the stack's servers (as a crash would) and wait until it is gone."""
    import signal

    pid = pids()[name]
    os.kill(pid, signal.SIGKILL)
    wait_until(
        lambda: not os.path.exists("/proc/%d" % pid) or open("/proc/%d/stat" % pid).read().split()[2] == "Z",
        30,
        "%s (pid %d) to exit" % (name, pid),
    )


def query(sql, data=None):
    """One ClickHouse statement over HTTP (data: an INSERT's rows); its text answer, stripped."""
    import requests

    r = requests.post(
        CLICKHOUSE + "/",
        params={"query": sql} if data is not None else None,
        data=data if data is not None else sql,
        timeout=30,
    )
    assert r.status_code == 200, sql + "\n" + r.text
    return r.text.strip()


def cpi_sample(host, job, task):
    """A valid CpiSample record (wire.encode("CpiSample", ...)) of a simulated task, now.

    Every field the schema gives a default starts at it, so the record is what decode returns."""
    record = {f["name"]: f["default"] for f in avroschemas.message_schemas()["CpiSample"]["fields"] if "default" in f}
    record.update(
        {
            "host": host,
            "task": task,
            "job": job,
            "task_id": "1",
            "platform": "test/1/2/cpu",
            "task_class": "BATCH",
            "is_protected": False,
            "window_start_us": int(time.time() * 1e6),
            "window_us": 10_000_000,
            "cycles": 2000,
            "instructions": 1000,
            "counter_source": "SIMULATED",
            "time_running_ratio": 1.0,
            "cpu_usage": 0.5,
            "cpi": 2.0,
            "llc_misses": None,
            "numa_score": None,
            "threads": 3,
            "cpu_pressure": None,
            "memory_pressure": None,
            "memory_pressure_full": None,
            "llc_occupancy_bytes": None,
            "memory_bandwidth_bytes_per_s": None,
            "llc_mpki": None,
            "host_cpus": 4,
        }
    )
    return record
