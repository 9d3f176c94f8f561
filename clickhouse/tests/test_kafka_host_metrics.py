"""host_metrics fed by the local stack's live Telegraf through Kafka (server only: the Kafka engine
table consumes cpi2.host-metrics with a consumer group of its own)."""

import os
import time

from conftest import server

from cpi2.clickhouse import schema
from cpi2.testing import stack

BROKERS = f"{os.environ.get('STACK_HOST', '127.0.0.1')}:{os.environ.get('KAFKA_PORT', '9092')}"
# ClickHouse reads as principal clickhouse (the <kafka> section of the stack's config.xml), whose
# ACLs allow the consumer groups named cpi2-clickhouse-*.
GROUP_PREFIX = "cpi2-clickhouse-"


def test_telegraf_metrics_reach_host_metrics_through_kafka():
    stack.ensure_up()  # Telegraf too: a stack `make demo` started has none until the tests' tier built it
    ch = server()
    db = f"cpi2_test_{os.getpid()}_kafka"
    schema.drop_database(ch, db)
    try:
        schema.apply(ch, db, log=lambda *_: None)
        schema.apply_kafka(ch, db, BROKERS, group=GROUP_PREFIX + db, log=lambda *_: None)
        schema.apply_kafka(ch, db, BROKERS, group=GROUP_PREFIX + db, log=lambda *_: None)  # idempotent
        deadline = time.monotonic() + 90
        names = set()
        while time.monotonic() < deadline and not {"cpu", "mem", "system"} <= names:
            time.sleep(2)
            names = set(
                ch.query(f"SELECT DISTINCT name FROM {db}.host_metrics WHERE host != '' AND timestamp_ms > 0").split()
            )
        assert {"cpu", "mem", "system"} <= names, (
            f"Telegraf's metrics did not arrive through Kafka {BROKERS} within 90 s: {names}"
        )
        row = ch.query(
            f"SELECT count(), min(usage_idle) >= 0, max(usage_idle) <= 100 FROM {db}.host_metrics"
            " WHERE name = 'cpu' AND cpu = 'cpu-total'"
        ).split()
        assert int(row[0]) >= 1 and row[1:] == ["1", "1"]
    finally:
        schema.drop_database(ch, db)


def test_kafka_settings_are_validated():
    import pytest

    with pytest.raises(ValueError, match="brokers"):
        schema.apply_kafka(None, "cpi2", "h:1', kafka_format = 'x")
