"""Operator commands to the enforcers (paper section 5): ControlCommand records on cpi2.control,
in the project's wire format (cpi2.schemas.wire: C3 01, CRC-64-AVRO fingerprint, payload).
Key: the target host, or '*' for the whole cluster (what the enforcers filter on)."""

import getpass
import json
import math
import re
import uuid

from cpi2 import names, repo
from cpi2.cli import timerange
from cpi2.schemas import wire

TOPIC = names.CONTROL
CLUSTER_KEY = "*"
MAX_DURATION_S = 7 * 86400
_BAD_CHARS = re.compile(r"[\x00-\x1f\x7f]")


class ControlError(Exception):
    """A command that cannot be built (bad arguments); str() says why."""


class DeliveryError(ControlError):
    """Kafka could not be reached or did not take the command; str() names the broker."""


def _name(kind, value):
    if not value or _BAD_CHARS.search(value):
        raise ControlError(f"{kind} {value!r} is empty or contains control characters")
    return value


def command(kind, host=None, task=None, cap_cpu=None, duration_s=None, operator=None, reason="", now_us=None):
    """A ControlCommand record (dict in the schema's fields), validated."""
    if kind not in names.COMMAND_KIND:
        raise ControlError(f"unknown command {kind}")
    if host is not None:
        _name("host", host)
        if host == CLUSTER_KEY:
            raise ControlError("host '*' is the cluster key; use --cluster")
    if kind in ("CAP", "UNCAP"):
        _name("task", task)
        if host is None:
            raise ControlError(f"{kind.lower()} needs --host: a task is capped on one machine")
    if kind == "CAP":
        if cap_cpu is None or not math.isfinite(cap_cpu) or not 0 < cap_cpu <= 1024:
            raise ControlError(f"--cpu {cap_cpu}: a cap is CPU-seconds per second, above 0 and at most 1024")
        if duration_s is None or not 0 < duration_s <= MAX_DURATION_S:
            raise ControlError(f"--duration {duration_s}: seconds, from 1 to {MAX_DURATION_S}")
    return {
        "command_id": str(uuid.uuid4()),
        "issued_at_us": timerange.now_us() if now_us is None else now_us,
        "command": kind,
        "host": host,
        "task": task,
        "cap_cpu": float(cap_cpu) if kind == "CAP" else None,
        "duration_s": int(duration_s) if kind == "CAP" else None,
        "operator": operator if operator is not None else _operator(),
        "reason": reason or "",
    }


def _operator():
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


def encode(record):
    return wire.encode("ControlCommand", record)


def decode(data):
    return wire.decode("ControlCommand", data)


def key(record):
    return (record["host"] or CLUSTER_KEY).encode()


def publish(record, bootstrap, timeout_s=10.0, topic=TOPIC, client_file=""):
    """Sends one command and waits until the broker has it; returns (partition, offset). Signs in
    with the client file's properties (SASL, TLS) if one is given. Raises ControlError naming the
    broker when it cannot be reached or refuses the record (or the client file)."""
    from confluent_kafka import KafkaError, KafkaException, Producer

    try:
        client = repo.read_client_file(client_file) if client_file else {}
    except repo.ClientFileError as e:
        raise DeliveryError(str(e)) from None
    errors = []
    producer = Producer(
        {
            **client,
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "message.timeout.ms": int(timeout_s * 1000),
            "socket.connection.setup.timeout.ms": max(1000, int(timeout_s * 1000)),
            "error_cb": lambda e: errors.append(e),
            "log_level": 0,
        }
    )
    try:
        md = producer.list_topics(topic, timeout=timeout_s)
    except KafkaException as e:
        refused = [x for x in errors if x.code() == KafkaError._AUTHENTICATION]
        if refused:
            raise DeliveryError(f"Kafka at {bootstrap} refused the sign-in: {refused[-1].str()}") from None
        raise DeliveryError(f"Kafka unreachable at {bootstrap}: {e.args[0].str() if e.args else e}") from None
    t = md.topics.get(topic)
    if t is None or t.error is not None:
        raise DeliveryError(f"topic {topic} not available on {bootstrap}: {t.error.str() if t else 'missing'}")
    result = {}

    def delivered(err, msg):
        result["err"], result["msg"] = err, msg

    producer.produce(topic, key=key(record), value=encode(record), on_delivery=delivered)
    producer.flush(timeout_s + 5)
    if "err" not in result:
        raise DeliveryError(f"Kafka at {bootstrap} did not confirm the command within {timeout_s:g} s")
    if result["err"] is not None:
        raise DeliveryError(f"Kafka at {bootstrap} refused the command: {result['err'].str()}")
    return result["msg"].partition(), result["msg"].offset()


def add_parsers(sub):
    cap = sub.add_parser(
        "cap",
        help="cap a task's CPU on a host by hand",
        description="Publish a CAP command: the host's enforcer caps TASK (a cgroup under its root) "
        "to --cpu CPU-seconds per second for --duration seconds.",
    )
    cap.add_argument("task", metavar="TASK", help="cgroup of the task, relative to the enforcer's cgroup root")
    cap.add_argument("--host", required=True, help="machine whose enforcer applies the cap")
    cap.add_argument("--cpu", type=float, default=0.1, help="cap, CPU-seconds per second (default %(default)s)")
    cap.add_argument("--duration", type=int, default=300, help="seconds (default %(default)s)")
    _common(cap)
    cap.set_defaults(func=run, kind="CAP")

    uncap = sub.add_parser(
        "uncap",
        help="lift a task's cap on a host",
        description="Publish an UNCAP command: the host's enforcer restores TASK's previous limit.",
    )
    uncap.add_argument("task", metavar="TASK", help="cgroup of the task, relative to the enforcer's cgroup root")
    uncap.add_argument("--host", required=True, help="machine whose enforcer lifts the cap")
    _common(uncap)
    uncap.set_defaults(func=run, kind="UNCAP", cpu=None, duration=None)

    prot = sub.add_parser(
        "protection",
        help="switch CPI2 protection on or off for a host or the cluster",
        description="Publish PROTECTION_ON / PROTECTION_OFF. Off lifts the caps in force and "
        "refuses new incident caps until switched on again.",
    )
    prot.add_argument("state", choices=["on", "off"], help="on or off")
    target = prot.add_mutually_exclusive_group(required=True)
    target.add_argument("--host", help="one machine")
    target.add_argument("--cluster", action="store_true", help="every machine")
    _common(prot)
    prot.set_defaults(func=run, kind=None, task=None, cpu=None, duration=None)


def _common(p):
    p.add_argument("--reason", default="", help="why, recorded with the command and the enforcer's action")
    p.add_argument("--operator", default=None, help="who (default: the login name)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for Kafka (default %(default)s)")
    p.add_argument("--json", action="store_true", help="print the command sent as JSON")
    p.add_argument("--topic", default=TOPIC, help="topic of the commands (default %(default)s)")


def run(args, out):
    kind = args.kind or ("PROTECTION_ON" if args.state == "on" else "PROTECTION_OFF")
    rec = command(
        kind,
        host=args.host,
        task=args.task,
        cap_cpu=args.cpu,
        duration_s=args.duration,
        operator=args.operator,
        reason=args.reason,
    )
    partition, offset = publish(rec, args.kafka, args.timeout, args.topic, args.kafka_client_file)
    if args.json:
        print(json.dumps(dict(rec, topic=args.topic, partition=partition, offset=offset)), file=out)
    else:
        target = f"host {rec['host']}" if rec["host"] else "the cluster"
        what = {
            "CAP": lambda: f"cap {rec['task']} to {rec['cap_cpu']:g} CPU for {rec['duration_s']} s",
            "UNCAP": lambda: f"uncap {rec['task']}",
            "PROTECTION_ON": lambda: "protection on",
            "PROTECTION_OFF": lambda: "protection off",
        }[kind]()
        print(
            f"sent {what} on {target}: command {rec['command_id']} ({args.topic} partition {partition} offset {offset})",
            file=out,
        )
    return 0
