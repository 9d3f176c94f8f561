"""Kafka's authentication and authorisation on the local stack (stack/kafka/acls.conf), judged by
Kafka itself: what a client is refused comes back from the broker (a failed SASL sign-in, or
TOPIC_AUTHORIZATION_FAILED in the delivery report), and is then checked absent from the topic.

Refused writes carry a marker; a write that is allowed goes only where it harms nothing (a
dead letter, a sample of a host that does not exist, a command for a host that does not exist).
"""

import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from cpi2.schemas import wire
from cpi2.testing import stack

pytestmark = pytest.mark.usefixtures("stack_up")

MARK = b"cpi2-auth-test-" + uuid.uuid4().hex.encode()


@pytest.fixture(scope="module", autouse=True)
def secrets():
    assert stack.kafka_client_file("admin"), (
        "the stack has no Kafka secrets in %s: it was started before authentication; "
        "make down && make up" % stack.SECRETS_DIR
    )


def produce(conf, topic, value, timeout=15):
    """One message; returns (the delivery report's error or None, the errors the client reported)."""
    errors, report = [], []
    p = Producer(dict(conf, **{"message.timeout.ms": timeout * 1000, "error_cb": errors.append, "log_level": 0}))
    p.produce(topic, key=b"cpi2-auth-test", value=value, on_delivery=lambda err, msg: report.append(err))
    p.flush(timeout + 5)
    assert report, "no delivery report within %d s" % (timeout + 5)
    return report[0], errors


def end_offsets(topic):
    c = Consumer(stack.kafka_conf("admin", **{"group.id": "cpi2-auth-test"}))
    try:
        parts = c.list_topics(topic, timeout=10).topics[topic].partitions
        return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts}
    finally:
        c.close()


def values_since(topic, offsets):
    """The values written to topic after offsets up to its end now (read as admin)."""
    end = end_offsets(topic)
    c = Consumer(stack.kafka_conf("admin", **{"group.id": "cpi2-auth-test", "enable.auto.commit": False}))
    try:
        c.assign([TopicPartition(topic, p, o) for p, o in offsets.items()])
        out, next_offset, deadline = [], dict(offsets), time.time() + 20
        while any(next_offset[p] < end[p] for p in end) and time.time() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is None:
                out.append(m.value())
                next_offset[m.partition()] = m.offset() + 1
        assert all(next_offset[p] >= end[p] for p in end), "%s: not read to its end in 20 s" % topic
        return out
    finally:
        c.close()


def test_plaintext_and_bad_passwords_are_refused_at_sign_in():
    before = end_offsets("cpi2.control")
    err, errors = produce({"bootstrap.servers": stack.KAFKA}, "cpi2.control", MARK, timeout=5)
    assert err is not None and err.code() == KafkaError._MSG_TIMED_OUT, err
    assert errors, "a PLAINTEXT client met no error from a SASL_SSL listener"
    collector = stack.read_client_file(stack.kafka_client_file("collector"))["sasl.password"]
    for principal, password in (
        ("operator", "not-the-password"),
        ("operator", collector),
        ("admin", "not-the-password"),
        ("nobody", "x"),
    ):
        conf = stack.kafka_conf(
            principal if principal != "nobody" else "operator",
            **{"sasl.username": principal, "sasl.password": password},
        )
        err, errors = produce(conf, "cpi2.control", MARK, timeout=5)
        assert err is not None, "%s with a wrong password wrote cpi2.control" % principal
        auth = [e for e in errors if e.code() == KafkaError._AUTHENTICATION]
        assert auth and "Authentication failed" in auth[0].str(), (principal, [e.str() for e in errors])
    assert MARK not in values_since("cpi2.control", before)


@pytest.mark.parametrize(
    "principal,topic",
    [
        ("collector", "cpi2.control"),
        ("collector", "cpi2.incidents"),
        ("enforcer", "cpi2.control"),
        ("enforcer", "cpi2.incidents"),
        ("operator", "cpi2.incidents"),
        ("operator", "cpi2.samples"),
        ("telegraf", "cpi2.control"),
        ("clickhouse", "cpi2.host-metrics"),
        ("detector", "cpi2.control"),
        ("detector", "cpi2.actions"),
        ("enforcer", "cpi2.specs"),
    ],
)
def test_wrong_principal_is_refused_by_the_authorizer(principal, topic):
    before = end_offsets(topic)
    err, _ = produce(stack.kafka_conf(principal), topic, MARK)
    assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, (principal, topic, err)
    assert MARK not in values_since(topic, before)


def dead_letter(component):
    return wire.encode(
        "DeadLetter",
        {
            "at_us": int(time.time() * 1e6),
            "component": component,
            "source_topic": "cpi2-auth-test",
            "partition": 0,
            "offset": 0,
            "reason": "test_kafka_auth: a principal writes its dead letters",
            "payload": MARK,
        },
    )


def test_right_principals_write_their_topics():
    for principal in ("collector", "enforcer", "detector"):
        before = end_offsets("cpi2.dead-letter")
        err, errors = produce(stack.kafka_conf(principal), "cpi2.dead-letter", dead_letter("auth-test-" + principal))
        assert err is None, (principal, err, [e.str() for e in errors])
        assert any(MARK in v for v in values_since("cpi2.dead-letter", before)), principal
    host = "cpi2-auth-test-no-such-host-" + uuid.uuid4().hex[:6]
    sample = stack.cpi_sample(host, "auth-test", "auth-test.slice/t1")
    err, _ = produce(stack.kafka_conf("collector"), "cpi2.samples", wire.encode("CpiSample", sample))
    assert err is None, err


def consume_one_poll(principal, topic, group):
    """Subscribes as principal and returns the first error the consumer meets (None: none)."""
    c = Consumer(
        stack.kafka_conf(
            principal, **{"group.id": group, "auto.offset.reset": "latest", "enable.auto.commit": False, "log_level": 0}
        )
    )
    try:
        c.subscribe([topic])
        deadline = time.time() + 15
        while time.time() < deadline:
            m = c.poll(0.5)
            if m is not None and m.error() is not None:
                return m.error()
            if c.assignment():
                return None
        raise AssertionError("%s: neither an assignment nor an error on %s within 15 s" % (principal, topic))
    finally:
        c.close()


def test_consumers_read_only_their_topics_in_their_groups():
    run = uuid.uuid4().hex[:6]
    assert consume_one_poll("enforcer", "cpi2.incidents", "cpi2-enforcer-auth-test-" + run) is None
    assert consume_one_poll("clickhouse", "cpi2.host-metrics", "cpi2-clickhouse-auth-test-" + run) is None
    err = consume_one_poll("enforcer", "cpi2.incidents", "auth-test-" + run)  # not its group
    assert err is not None and err.code() == KafkaError.GROUP_AUTHORIZATION_FAILED, err
    err = consume_one_poll("collector", "cpi2.control", "cpi2-enforcer-auth-test-" + run)  # not its topic
    assert err is not None and err.code() in (
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.GROUP_AUTHORIZATION_FAILED,
    ), err
