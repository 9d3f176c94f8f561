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
    code, out, err = cli("--kafka", kafka, *who, *argv, "--topic", topic, "-o", "json")
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

    sent, m = _send(cli, kafka, topic, "protection", "off", "--cluster", "--yes")
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


def test_protection_off_for_the_cluster_is_confirmed(cli, kafka, topic, monkeypatch):
    """Not on a terminal (as here) and without --yes: refused, nothing sent; on a terminal the
    operator's answer decides."""
    before = _end(kafka, topic)
    code, out, err = cli("--kafka", kafka, *ADMIN, "protection", "off", "--cluster", "--topic", topic)
    assert code == 2 and "add --yes" in err and out == ""
    assert _end(kafka, topic) == before
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    for answer, sent in (("n", False), ("y", True)):
        monkeypatch.setattr("builtins.input", lambda a=answer: a)
        code, out, err = cli("--kafka", kafka, *ADMIN, "protection", "off", "--cluster", "--topic", topic)
        assert (code == 0) == sent and ("not confirmed" in err) != sent, (answer, err)
        assert "[y/N]" in err
    assert _end(kafka, topic) == before + 1


def _end(bootstrap, topic):
    """The sum of the topic's end offsets."""
    c = Consumer(fixtures.kafka_conf(bootstrap, **{"group.id": "cpi2ctl-test-ends"}))
    try:
        parts = c.list_topics(topic, timeout=10).topics[topic].partitions
        return sum(c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts)
    finally:
        c.close()


def test_protection_status_reads_the_kill_switches(cli, kafka):
    """On cpi2.control itself, as principal operator (its READ ACL), for a host that does not exist:
    switched off, the host is listed off and --host says so; switched on again, it is not listed."""
    host = f"cpi2ctl-test-no-such-host-{os.getpid()}"
    sent, _ = _send(cli, kafka, control.TOPIC, "protection", "off", "--host", host, "--reason", "status test")
    code, out, err = cli("--kafka", kafka, "protection", "status", "-o", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert rows[0]["scope"] == "cluster" and rows[0]["host"] == "*"
    mine = [r for r in rows if r["host"] == host]
    assert mine == [
        {
            "scope": "host",
            "host": host,
            "protection": "off",
            "since_us": sent["issued_at_us"],
            "operator": sent["operator"],
            "reason": "status test",
            "command_id": sent["command_id"],
        }
    ]
    code, out, err = cli("--kafka", kafka, "protection", "status", "--host", host)
    assert code == 0 and out.splitlines()[1].split()[:3] == ["host", host, "off"], out
    on, _ = _send(cli, kafka, control.TOPIC, "protection", "on", "--host", host)
    code, out, err = cli("--kafka", kafka, "protection", "status", "-o", "json")
    assert host not in [r["host"] for r in json.loads(out)]
    code, out, err = cli("--kafka", kafka, "protection", "status", "--host", host, "-o", "yaml")
    assert "protection: 'on'" in out and on["command_id"] in out


def test_status_folds_commands_in_order():
    def cmd(kind, host, t):
        return {"command": kind, "host": host, "issued_at_us": t, "operator": "o", "reason": "", "command_id": str(t)}

    records = [
        cmd("PROTECTION_OFF", "h1", 1),
        cmd("PROTECTION_OFF", None, 2),
        cmd("CAP", "h2", 3),
        cmd("PROTECTION_OFF", "h2", 4),
        cmd("PROTECTION_ON", "h1", 5),
    ]
    rows = control.status_rows(records)
    assert [(r[0], r[1], r[2]) for r in rows] == [("cluster", "*", "off"), ("host", "h2", "off")]
    assert control.status_rows(records, "h1")[0][2] == "off"  # the cluster is off
    records.append(cmd("PROTECTION_ON", None, 6))
    assert control.status_rows(records, "h1")[0][:3] == ("host", "h1", "on")
    assert control.status_rows(records, "h2")[0][:3] == ("host", "h2", "off")
    assert control.status_rows([])[0][:3] == ("cluster", "*", "on")


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


def test_default_client_file_is_the_stacks_operator(monkeypatch, tmp_path):
    from cpi2 import repo
    from cpi2.cli import config, main

    path = fixtures.kafka_client_file("operator")
    monkeypatch.setenv("CPI2_CONFIG", str(tmp_path / "none.yaml"))
    if os.environ.get("CPI2_KAFKA_CLIENT_FILE") is None:
        args = main.parser().parse_args(["protection", "on", "--cluster"])
        assert config.resolve(args).kafka_client_file == path
    if path:
        assert repo.read_client_file(path)["sasl.username"] == "operator"
