#!/usr/bin/env python3
"""cpi2-fleetsim against the real local Kafka: what it publishes decodes with the project's wire
codec (cpi2.schemas.wire) as CpiSample, keyed by host, SIMULATED, and carries exactly the
samples the same seed prints with --stdout; its --acked-file lists each of them once (the
broker acknowledged every one). Uses a temporary topic (deleted afterwards) so the
pipeline's cpi2.samples is not polluted. Starts the stack (make up) if Kafka does not answer.

Usage: test_kafka_roundtrip.py PATH/TO/cpi2-fleetsim
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from cpi2.schemas import wire
from cpi2.testing import fixtures, stack  # the stack's address and Kafka principals


def main():
    binary = sys.argv[1]
    brokers = fixtures.kafka(stack.KAFKA)  # make up when Kafka does not answer
    # As admin: the test's own topic is no principal's but admin's (collector writes cpi2.samples).
    admin = AdminClient(stack.kafka_conf("admin", **{"bootstrap.servers": brokers}))
    topic = "fleetsim-test-%s" % uuid.uuid4().hex[:8]
    admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])[topic].result(30)
    acked_file = tempfile.NamedTemporaryFile(prefix="fleetsim-acked-", suffix=".tsv", delete=False).name
    try:
        args = [
            "-s",
            "case2",
            "--seed",
            "11",
            "--warmup",
            "0",
            "--duration",
            "5m",
            "--speed",
            "max",
            "--start",
            "1305504000",
            "--truth",
            "none",
        ]
        run = subprocess.run(
            [binary, *args, "-b", brokers, "-t", topic, "-X", "linger.ms=5", "--acked-file", acked_file]
            + stack.agent_kafka_args("admin"),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, "fleetsim exit %d:\n%s" % (run.returncode, run.stderr)
        printed = subprocess.run(
            [binary, *args, "--stdout"], capture_output=True, text=True, timeout=120, check=True
        ).stdout.splitlines()
        want = {}
        for line in printed:
            s = json.loads(line)
            want[(s["host"], s["task"], s["window_start_us"])] = s
        assert len(want) == 252 * 5, "stdout run printed %d distinct samples" % len(want)
        acked = [tuple(line.split("\t")) for line in open(acked_file).read().splitlines()]
        acked = [(h, t, int(w)) for h, t, w in acked]
        assert len(acked) == len(set(acked)) == len(want), "%d acknowledged lines, %d distinct, of %d samples" % (
            len(acked),
            len(set(acked)),
            len(want),
        )
        assert set(acked) == set(want), (
            "acknowledged identities differ from the samples: %s" % sorted(set(acked) ^ set(want))[:3]
        )
        assert ("%d acknowledged" % len(want)) in run.stderr, run.stderr[-500:]

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
        consumer.assign([TopicPartition(topic, p, 0) for p in range(2)])
        got, deadline = {}, time.time() + 60
        while len(got) < len(want) and time.time() < deadline:
            for m in consumer.consume(num_messages=5000, timeout=1.0):
                assert not m.error(), m.error()
                s = wire.decode("CpiSample", m.value())
                assert m.key().decode() == s["host"], "key %r for host %s" % (m.key(), s["host"])
                got[(s["host"], s["task"], s["window_start_us"])] = s
        consumer.close()
        assert len(got) == len(want), "consumed %d of %d samples" % (len(got), len(want))
        for k, s in got.items():
            w = want[k]
            assert s["counter_source"] == "SIMULATED", s
            assert s["window_us"] == 10_000_000, s
            assert s["cycles"] == w["cycles"] and s["instructions"] == w["instructions"], (s, w)
            assert s["job"] == w["job"] and s["platform"].endswith("(simulated)"), s
            assert abs(s["cpi"] - s["cycles"] / s["instructions"]) < 1e-9, s
        print(
            "kafka roundtrip: %d samples decoded from %s, identical to --stdout, each acknowledged once"
            % (len(got), topic)
        )
    finally:
        os.unlink(acked_file)
        admin.delete_topics([topic])[topic].result(30)


if __name__ == "__main__":
    main()
