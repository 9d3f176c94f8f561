#!/usr/bin/env python3
"""cpi2-collector against the real local Kafka: two windows over a fresh cgroup tree (a busy
task and an idle one, counted with task-clock) are published to a temporary topic, keyed by
host, and decode with the project's wire codec (cpi2.schemas.wire) as CpiSample with the
collector's fields: SOFTWARE source, no CPI, the busy task's CPU usage. Every sample the log
says was sent is delivered. Starts the stack (make up) if Kafka does not answer.

Usage: test_kafka.py PATH/TO/cpi2-collector
"""

import os
import subprocess
import sys
import tempfile
import time
import uuid

import cgtest  # this script's folder is on the path
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from cpi2.schemas import wire
from cpi2.testing import fixtures, stack  # the stack's address and Kafka principals


def main():
    binary = sys.argv[1]
    cgtest.skip_unless_real_cgroups()
    brokers = fixtures.kafka(stack.KAFKA)  # make up when Kafka does not answer
    # As admin: the test's own topic is no principal's but admin's (collector writes cpi2.samples).
    admin = AdminClient(stack.kafka_conf("admin", **{"bootstrap.servers": brokers}))
    topic = "collector-test-%s" % uuid.uuid4().hex[:8]
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result(30)
    root = cgtest.make_cgroup("cpi2-test-kafka-%d" % os.getpid())
    for t in ("busy", "idle"):
        os.makedirs(os.path.join(root, t))
    spinner = cgtest.busy(os.path.join(root, "busy"))
    try:
        with tempfile.NamedTemporaryFile("w", suffix=".rules") as rules:
            rules.write("* job=kafka-test task_id=$1 class=best_effort\n")
            rules.flush()
            run = subprocess.run(
                [
                    binary,
                    "--events",
                    "task-clock",
                    "--roots",
                    root,
                    "--rules-file",
                    rules.name,
                    "--window-s",
                    "0.5",
                    "--period-s",
                    "1",
                    "--windows",
                    "2",
                    "--host",
                    "test-host-1",
                    "--brokers",
                    brokers,
                    "--topic",
                    topic,
                    "-X",
                    "linger.ms=1",
                ]
                + stack.agent_kafka_args("admin"),
                capture_output=True,
                text=True,
                timeout=60,
            )
        print(run.stderr, end="")
        assert run.returncode == 0, "collector exit %d" % run.returncode
        assert "4 sent, 4 delivered, 0 failed, 0 dropped (queue full), 0 left undelivered" in run.stderr

        consumer = Consumer(
            stack.kafka_conf(
                "admin",
                **{
                    "bootstrap.servers": brokers,
                    "group.id": topic,
                    "auto.offset.reset": "earliest",
                    "enable.auto.commit": False,
                },
            )
        )
        consumer.assign([TopicPartition(topic, 0, 0)])
        got, deadline = [], time.time() + 30
        while len(got) < 4 and time.time() < deadline:
            for m in consumer.consume(num_messages=100, timeout=1.0):
                assert not m.error(), m.error()
                assert m.key() == b"test-host-1", m.key()
                got.append(wire.decode("CpiSample", m.value()))
        consumer.close()
    finally:
        cgtest.stop(spinner)
        cgtest.remove_tree(root)
        admin.delete_topics([topic])[topic].result(30)
    assert len(got) == 4, got
    assert sorted(s["task"] for s in got) == ["busy", "busy", "idle", "idle"], got
    assert len({s["window_start_us"] for s in got}) == 2
    for s in got:
        assert s["host"] == "test-host-1" and s["job"] == "kafka-test" and s["task_id"] == s["task"], s
        assert s["task_class"] == "BEST_EFFORT" and s["counter_source"] == "SOFTWARE" and s["cpi"] is None, s
        assert 0.45e6 <= s["window_us"] <= 0.6e6, s
        if s["task"] == "busy":
            assert s["cpu_usage"] > 0.2 and s["cycles"] > 0, s
        else:
            assert s["cpu_usage"] == 0 and s["cycles"] == 0, s
    print("collector kafka: 4 samples decoded from %s" % topic)


if __name__ == "__main__":
    main()
