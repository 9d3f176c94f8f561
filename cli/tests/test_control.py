"""Control commands on the real local Kafka: what cpi2ctl publishes is read back from the broker and
decoded with the golden-vector-tested codec; errors are clear. Commands that would act (caps,
protection off) go to a throw-away topic, so that no enforcer of the local stack obeys a test;
cpi2.control itself gets one command for a host that does not exist."""

import json
import os
import time

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from cpi2.cli import control
from cpi2.testing import fixtures

# Commands to the throw-away topic go as admin: principal operator may write cpi2.control only.
ADMIN = ("--kafka-client-file", fixtures.kafka_client_file("admin"))


@pytest.fixture(scope="module")
def topic(kafka):
    name = f"cpi2ctl-test-{os.getpid()}-{time.time_ns()}"
    admin = AdminClient(fixtures.kafka_conf(kafka))
    admin.create_topics([NewTopic(name, num_partitions=2, replication_factor=1)])[name].result(30)
    yield name
    admin.delete_topics([name])[name].result(30)


def _read_back(bootstrap, partition, offset, topic=control.TOPIC):
    c = Consumer(
        fixtures.kafka_conf(bootstrap, **{"group.id": f"cpi2ctl-test-{time.time_ns()}", "enable.auto.commit": False})
    )
    try:
        c.assign([TopicPartition(topic, partition, offset)])
        deadline = time.time() + 20
        while time.time() < deadline:
            m = c.poll(1.0)
            if m is not None and not m.error():
                return m
        pytest.fail(f"nothing read back from {topic}[{partition}]@{offset} within 20 s")
    finally:
        c.close()


def _send(cli, kafka, topic, *argv):
    who = () if topic == control.TOPIC else ADMIN  # cpi2.control: as operator, the default
    code, out, err = cli("--kafka", kafka, *who, *argv, "--topic", topic, "--json")
    assert code == 0, err
    sent = json.loads(out)
    assert sent["topic"] == topic
    return sent, _read_back(kafka, sent["partition"], sent["offset"], topic)


def test_command_reaches_cpi2_control_and_decodes(cli, kafka):
    sent, m = _send(cli, kafka, control.TOPIC, "uncap", "cpi2.slice/none", "--host", "cpi2ctl-test-no-such-host")
    assert m.key() == b"cpi2ctl-test-no-such-host"
    got = control.decode(m.value())
    assert got["command_id"] == sent["command_id"]
    assert (got["command"], got["task"]) == ("UNCAP", "cpi2.slice/none")


def test_cap_reaches_kafka_and_decodes(cli, kafka, topic):
    sent, m = _send(
        cli,
        kafka,
        topic,
        "cap",
        "cpi2.slice/batch-7",
        "--host",
        "h1",
        "--cpu",
        "0.05",
        "--duration",
        "120",
        "--reason",
        "cli test",
        "--operator",
        "tester",
    )
    assert m.key() == b"h1"
    got = control.decode(m.value())
    assert got == {k: sent[k] for k in got}
    assert (got["command"], got["host"], got["task"], got["cap_cpu"], got["duration_s"]) == (
        "CAP",
        "h1",
        "cpi2.slice/batch-7",
        0.05,
        120,
    )
    assert (got["operator"], got["reason"]) == ("tester", "cli test")
    assert abs(got["issued_at_us"] - time.time() * 1e6) < 60e6


def test_uncap_and_protection_commands(cli, kafka, topic):
    sent, m = _send(cli, kafka, topic, "uncap", "cpi2.slice/batch-7", "--host", "h2")
    got = control.decode(m.value())
    assert (got["command"], got["host"], got["task"], got["cap_cpu"], got["duration_s"]) == (
        "UNCAP",
        "h2",
        "cpi2.slice/batch-7",
        None,
        None,
    )

    sent, m = _send(cli, kafka, topic, "protection", "off", "--cluster")
    got = control.decode(m.value())
    assert m.key() == b"*"
    assert (got["command"], got["host"], got["task"]) == ("PROTECTION_OFF", None, None)

    sent, m = _send(cli, kafka, topic, "protection", "on", "--host", "h3")
    assert m.key() == b"h3"
    assert control.decode(m.value())["command"] == "PROTECTION_ON"


def test_missing_topic_is_named(cli, kafka):
    code, out, err = cli(
        "--kafka", kafka, "protection", "on", "--cluster", "--topic", "cpi2ctl-no-such-topic", "--timeout", "3"
    )
    assert code == 1 and "topic cpi2ctl-no-such-topic not available on " + kafka in err


def test_text_output_names_the_command(cli, kafka, topic):
    code, out, err = cli("--kafka", kafka, *ADMIN, "protection", "on", "--cluster", "--topic", topic)
    assert code == 0, err
    assert out.startswith("sent protection on on the cluster: command ")


def test_unreachable_kafka_is_named(cli):
    t0 = time.time()
    code, out, err = cli("--kafka", "127.0.0.1:1", "cap", "t", "--host", "h1", "--timeout", "2")
    assert code == 1
    assert "Kafka unreachable at 127.0.0.1:1" in err
    assert time.time() - t0 < 15


@pytest.mark.parametrize(
    "argv, message",
    [
        (["cap", "t", "--host", "h1", "--cpu", "0"], "--cpu 0.0"),
        (["cap", "t", "--host", "h1", "--cpu", "nan"], "--cpu nan"),
        (["cap", "t", "--host", "h1", "--duration", "0"], "--duration 0"),
        (["cap", "bad\ttask", "--host", "h1"], "control characters"),
        (["cap", "t", "--host", "*"], "use --cluster"),
    ],
)
def test_bad_commands_are_refused_before_sending(cli, argv, message):
    code, out, err = cli("--kafka", "127.0.0.1:1", *argv)
    assert code == 2
    assert message in err and out == ""


def test_protection_needs_a_target(cli):
    with pytest.raises(SystemExit) as e:
        cli("protection", "off")
    assert e.value.code == 2


def test_client_file_others_may_read_is_refused(cli, kafka, tmp_path):
    f = tmp_path / "kafka-operator.properties"
    f.write_text("security.protocol=SASL_SSL\nsasl.mechanisms=SCRAM-SHA-512\nsasl.username=operator\nsasl.password=x\n")
    f.chmod(0o644)
    code, out, err = cli(
        "--kafka", kafka, "--kafka-client-file", str(f), "protection", "on", "--cluster", "--timeout", "3"
    )
    assert code == 1 and "mode 0644" in err and "chmod 600" in err and "sasl.password=x" not in err


def test_default_client_file_is_the_stacks_operator():
    from cpi2 import repo
    from cpi2.cli import main

    path = fixtures.kafka_client_file("operator")
    if os.environ.get("CPI2_KAFKA_CLIENT_FILE") is None:
        assert main.parser().parse_args(["protection", "on", "--cluster"]).kafka_client_file == path
    if path:
        assert repo.read_client_file(path)["sasl.username"] == "operator"
