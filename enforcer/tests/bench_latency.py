"""Benchmark: incident-to-cap latency, from the incident's arrival in Kafka (its timestamp) to
the cgroup write, as cpi2-enforcer measures it, over the real local Kafka and a fake cgroup v2
tree; and the part of it inside the enforcer (the message received to the cgroup write). Target:
p99 under 10 ms. Prints the figures and the conditions (the machine's load before and after, the
state folder's file system). The renewals' rate limit is raised for the bench (incidents 20 ms
apart on 4 tasks: nearly all are renewals), and the enforcer starts with a full ids-seen file
(seen_ids_max, 8192 recent ids), as a long-running one has."""

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
SEEN_IDS = 8192  # the enforcer's seen_ids_max


def main():
    stack.ensure_up()
    tmp = tempfile.mkdtemp(prefix="cpi2-enforcer-bench-")
    host = "bench-" + uuid.uuid4().hex[:6]
    root = os.path.join(tmp, "cg")
    tasks = ["batch/t%d" % i for i in range(4)]
    for t in tasks:
        cgroup(root, t)
    state = os.path.join(tmp, "state")
    os.makedirs(state, mode=0o700)
    now_us = int(time.time() * 1e6)
    with open(os.path.join(state, "seen-ids"), "w") as f:  # a long-running enforcer's, full
        f.write("# cpi2-enforcer ids acted on: kind, seen at us, id\n")
        for i in range(SEEN_IDS):
            f.write("i\t%d\tit-%032x\n" % (now_us - (SEEN_IDS - i) * 1000, i))
    seen_kb = os.path.getsize(os.path.join(state, "seen-ids")) / 1024
    fs = subprocess.run(["stat", "-f", "-c", "%T", tmp], capture_output=True, text=True).stdout.strip()
    load_before = os.getloadavg()
    log = open(os.path.join(tmp, "enforcer.log"), "w+")
    proc = subprocess.Popen(
        [
            BIN,
            "--host",
            host,
            "--cgroup-root",
            root,
            "--state-dir",
            state,
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
    load_after = os.getloadavg()
    figures = {}
    for key, title in (("total", "incident-to-cap latency"), ("inside", "of which in the enforcer")):
        m = re.search(title + r".*n=(\d+) p50=([\d.]+) ms p99=([\d.]+) ms max=([\d.]+) ms", text)
        if not m:
            print(text[-3000:])
            raise SystemExit("enforcer bench: no '%s' report in the enforcer's log" % title)
        figures[key] = (int(m.group(1)), float(m.group(2)), float(m.group(3)), float(m.group(4)))
    n, p50, p99, mx = figures["total"]
    print("enforcer: incident-to-cap latency (Kafka timestamp of the incident -> cpu.max written)")
    print(
        "  conditions: local Kafka %s on loopback, fake cgroup v2 tree and state folder on %s (%s), %d incidents"
        " 20 ms apart over 4 tasks (4 new caps, the rest renewals), ids-seen file of %d ids (%.0f KB) at start,"
        " fetch.wait.max.ms=5, %d cores, load average %.1f before, %.1f after (1 min)"
        % (
            os.environ.get("KAFKA_VERSION", "4.3.1"),
            os.path.dirname(tmp),
            fs,
            N,
            SEEN_IDS,
            seen_kb,
            os.cpu_count(),
            load_before[0],
            load_after[0],
        )
    )
    print(
        "  n=%d  p50=%.2f ms  p99=%.2f ms  max=%.2f ms   target p99 < 10 ms: %s"
        % (n, p50, p99, mx, "met" if p99 < 10 else "NOT met")
    )
    print(
        "  in the enforcer (message received -> cpu.max written): n=%d  p50=%.2f ms  p99=%.2f ms  max=%.2f ms"
        % figures["inside"]
    )
    if n < N * 0.99:
        raise SystemExit("enforcer bench: only %d of %d incidents were applied" % (n, N))


if __name__ == "__main__":
    main()
