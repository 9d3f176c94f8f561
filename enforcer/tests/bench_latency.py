"""Benchmark: incident-to-cap latency, from the incident's arrival in Kafka (its timestamp) to
the cgroup write, as cpi2-enforcer measures it, over the real local Kafka and a fake cgroup v2
tree. Target: p99 under 50 ms. Prints the figures and the conditions. The renewals' rate limit is
raised for the bench (incidents 20 ms apart on 4 tasks: nearly all are renewals)."""

import os
import re
import signal
import subprocess
import tempfile
import time
import uuid

from confluent_kafka import Producer
from test_enforcer_kafka import BIN, cgroup, incident, stack, wire  # this script's folder is on the path

N = int(os.environ.get("BENCH_INCIDENTS", "500"))


def main():
    stack.ensure_up()
    tmp = tempfile.mkdtemp(prefix="cpi2-enforcer-bench-")
    host = "bench-" + uuid.uuid4().hex[:6]
    root = os.path.join(tmp, "cg")
    tasks = ["batch/t%d" % i for i in range(4)]
    for t in tasks:
        cgroup(root, t)
    log = open(os.path.join(tmp, "enforcer.log"), "w+")
    proc = subprocess.Popen(
        [
            BIN,
            "--host",
            host,
            "--cgroup-root",
            root,
            "--state-dir",
            os.path.join(tmp, "state"),
            "--brokers",
            stack.KAFKA,
            "--group-id",
            "cpi2-enforcer-bench-" + host,
            "--poll-ms",
            "100",
            "--renew-rate-per-s",
            "1000",
            "--renew-burst",
            "1000",
            "-X",
            "auto.offset.reset=latest",
            "-X",
            "fetch.wait.max.ms=5",
        ]
        + stack.agent_kafka_args("enforcer"),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    time.sleep(5)  # join the group before the first incident
    p = Producer(stack.kafka_conf("admin", **{"linger.ms": 0}))
    for i in range(N):
        p.produce("cpi2.incidents", key=host, value=wire.encode("Incident", incident(host, tasks[i % 4], 0.1, 60)))
        p.flush(5)
        time.sleep(0.02)
    time.sleep(2)
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    log.seek(0)
    text = log.read()
    m = re.search(r"incident-to-cap latency.*n=(\d+) p50=([\d.]+) ms p99=([\d.]+) ms max=([\d.]+) ms", text)
    if not m:
        print(text[-3000:])
        raise SystemExit("enforcer bench: no latency report in the enforcer's log")
    n, p50, p99, mx = int(m.group(1)), float(m.group(2)), float(m.group(3)), float(m.group(4))
    print("enforcer: incident-to-cap latency (Kafka timestamp of the incident -> cpu.max written)")
    print(
        "  conditions: local Kafka 4.3.1 on loopback, fake cgroup v2 tree on %s, %d incidents 20 ms apart over 4 tasks (4 new caps, the rest renewals),"
        " fetch.wait.max.ms=5, %d cores" % (os.path.dirname(tmp), N, os.cpu_count())
    )
    print(
        "  n=%d  p50=%.2f ms  p99=%.2f ms  max=%.2f ms   target p99 < 50 ms: %s"
        % (n, p50, p99, mx, "met" if p99 < 50 else "NOT met")
    )
    if n < N * 0.99:
        raise SystemExit("enforcer bench: only %d of %d incidents were applied" % (n, N))


if __name__ == "__main__":
    main()
