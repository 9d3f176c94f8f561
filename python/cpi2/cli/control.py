"""Operator commands to the enforcers (paper section 5): ControlCommand records on cpi2.control,
in the project's wire format (cpi2.schemas.wire: C3 01, CRC-64-AVRO fingerprint, payload).
Key: the target host, or '*' for the whole cluster (what the enforcers filter on)."""

import getpass
import math
import re
import sys
import uuid

from cpi2 import names, repo
from cpi2.cli import output, tasks, timerange
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


def _client(cls, bootstrap, timeout_s, client_file, **conf):
    """A Producer or Consumer signed in with the client file's properties, and the list its errors
    go to. Raises DeliveryError for a client file that cannot be used."""
    try:
        client = repo.read_client_file(client_file) if client_file else {}
    except repo.ClientFileError as e:
        raise DeliveryError(str(e)) from None
    errors = []
    c = cls(
        {
            **client,
            "bootstrap.servers": bootstrap,
            "socket.connection.setup.timeout.ms": max(1000, int(timeout_s * 1000)),
            "error_cb": lambda e: errors.append(e),
            "log_level": 0,
            **conf,
        }
    )
    return c, errors


def _topic(client, errors, bootstrap, topic, timeout_s):
    """The topic's metadata; DeliveryError naming the broker when it cannot be reached, refuses the
    sign-in, or has no such topic."""
    from confluent_kafka import KafkaError, KafkaException

    try:
        md = client.list_topics(topic, timeout=timeout_s)
    except KafkaException as e:
        refused = [x for x in errors if x.code() == KafkaError._AUTHENTICATION]
        if refused:
            raise DeliveryError(f"Kafka at {bootstrap} refused the sign-in: {refused[-1].str()}") from None
        raise DeliveryError(f"Kafka unreachable at {bootstrap}: {e.args[0].str() if e.args else e}") from None
    t = md.topics.get(topic)
    if t is None or t.error is not None:
        raise DeliveryError(f"topic {topic} not available on {bootstrap}: {t.error.str() if t else 'missing'}")
    return t


def publish(record, bootstrap, timeout_s=10.0, topic=TOPIC, client_file=""):
    """Sends one command and waits until the broker has it; returns (partition, offset). Signs in
    with the client file's properties (SASL, TLS) if one is given. Raises ControlError naming the
    broker when it cannot be reached or refuses the record (or the client file)."""
    from confluent_kafka import Producer

    producer, errors = _client(
        Producer,
        bootstrap,
        timeout_s,
        client_file,
        **{"acks": "all", "enable.idempotence": True, "message.timeout.ms": int(timeout_s * 1000)},
    )
    _topic(producer, errors, bootstrap, topic, timeout_s)
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


def add_parsers(sub, parents=()):
    parents = list(parents)
    cap = sub.add_parser(
        "cap",
        help="cap a task's CPU on a host by hand",
        description="Publish a CAP command: the host's enforcer caps TASK (a cgroup under its root, or a "
        "Kubernetes pod as namespace/pod) to --cpu CPU-seconds per second for --duration seconds.",
        parents=parents,
    )
    cap.add_argument("task", metavar="TASK", help="the task's cgroup below the enforcer's root, or namespace/pod")
    cap.add_argument("--host", required=True, help="machine whose enforcer applies the cap")
    cap.add_argument("--cpu", type=float, default=0.1, help="cap, CPU-seconds per second (default %(default)s)")
    cap.add_argument("--duration", type=int, default=300, help="seconds (default %(default)s)")
    _common(cap)
    cap.set_defaults(func=run, kind="CAP")

    uncap = sub.add_parser(
        "uncap",
        help="lift a task's cap on a host",
        description="Publish an UNCAP command: the host's enforcer restores TASK's previous limit.",
        parents=parents,
    )
    uncap.add_argument("task", metavar="TASK", help="the task's cgroup below the enforcer's root, or namespace/pod")
    uncap.add_argument("--host", required=True, help="machine whose enforcer lifts the cap")
    _common(uncap)
    uncap.set_defaults(func=run, kind="UNCAP", cpu=None, duration=None)

    prot = sub.add_parser(
        "protection",
        help="the kill switches: status, or switch protection on or off for a host or the cluster",
        description="status: the kill switches as operators set them through cpi2.control (read from the "
        "topic, which keeps them for its retention, 30 days). on/off: publish PROTECTION_ON / PROTECTION_OFF; "
        "off lifts the caps in force and refuses new incident caps until switched on again.",
    )
    ps = prot.add_subparsers(dest="state", metavar="STATE", required=True)
    status = ps.add_parser(
        "status",
        help="is protection on, for the cluster and for each host",
        description="The kill switches as the last PROTECTION_ON/OFF commands on cpi2.control set them: one "
        "row for the cluster and one per host switched off; with --host, that host's state (off when the "
        "cluster is).",
        parents=parents,
    )
    status.add_argument("--host", help="one machine: its effective state")
    status.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for Kafka (default %(default)s)")
    status.add_argument("--topic", default=TOPIC, help="topic of the commands (default %(default)s)")
    output.add_option(status)
    status.set_defaults(func=run_status)
    for state in ("on", "off"):
        sw = ps.add_parser(state, help=f"switch protection {state}", parents=parents)
        target = sw.add_mutually_exclusive_group(required=True)
        target.add_argument("--host", help="one machine")
        target.add_argument("--cluster", action="store_true", help="every machine")
        if state == "off":
            sw.add_argument("--yes", action="store_true", help="no confirmation asked (off for the whole cluster)")
        _common(sw)
        sw.set_defaults(
            func=run, kind="PROTECTION_ON" if state == "on" else "PROTECTION_OFF", task=None, cpu=None, duration=None
        )


def _common(p):
    p.add_argument("--reason", default="", help="why, recorded with the command and the enforcer's action")
    p.add_argument("--operator", default=None, help="who (default: the login name)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for Kafka (default %(default)s)")
    p.add_argument("--topic", default=TOPIC, help="topic of the commands (default %(default)s)")
    output.add_option(p)


def confirm(args, question, err=None):
    """True when --yes was given or the operator answers y on a terminal; a non-interactive run
    without --yes is refused (ControlError)."""
    if getattr(args, "yes", False):
        return True
    if not sys.stdin.isatty():
        raise ControlError(f"{question}: not asked on a terminal; add --yes to confirm")
    print(f"{question} [y/N] ", end="", file=err or sys.stderr, flush=True)
    try:
        return input().strip().lower() in ("y", "yes")
    except EOFError:
        return False


def run(args, out):
    kind = args.kind
    if (
        kind == "PROTECTION_OFF"
        and args.cluster
        and not confirm(args, "Switch CPI2 protection off on every machine of the cluster (caps lifted, none applied)?")
    ):
        raise ControlError("not confirmed: nothing sent")
    task = args.task
    if task is not None and args.host:
        # a Kubernetes pod named namespace/pod: its cgroup on that host, from its samples
        from cpi2.clickhouse import chclient

        try:
            task = tasks.cgroup(args.settings.clickhouse_client(), args.database, args.host, task, timerange.now_us())
        except chclient.ClickHouseError:
            pass  # no ClickHouse: the name is taken as the cgroup, as the enforcer would take it
    rec = command(
        kind,
        host=args.host,
        task=task,
        cap_cpu=args.cpu,
        duration_s=args.duration,
        operator=args.operator,
        reason=args.reason,
    )
    partition, offset = publish(rec, args.settings.kafka, args.timeout, args.topic, args.settings.kafka_client_file)
    target = f"host {rec['host']}" if rec["host"] else "the cluster"
    what = {
        "CAP": lambda: f"cap {rec['task']} to {rec['cap_cpu']:g} CPU for {rec['duration_s']} s",
        "UNCAP": lambda: f"uncap {rec['task']}",
        "PROTECTION_ON": lambda: "protection on",
        "PROTECTION_OFF": lambda: "protection off",
    }[kind]()
    line = f"sent {what} on {target}: command {rec['command_id']} ({args.topic} partition {partition} offset {offset})"
    print(
        output.record_text(args.output, dict(rec, topic=args.topic, partition=partition, offset=offset), line), file=out
    )
    return 0


def read_commands(bootstrap, timeout_s=10.0, topic=TOPIC, client_file=""):
    """Every command on the topic, oldest first, decoded (records that do not decode are skipped):
    read from each partition's start to its end as the call began, without a consumer group."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition

    # group.id: the client requires one; it is never joined nor committed
    c, errors = _client(
        Consumer, bootstrap, timeout_s, client_file, **{"group.id": "cpi2ctl-read", "enable.auto.commit": False}
    )
    try:
        t = _topic(c, errors, bootstrap, topic, timeout_s)
        ends = {}
        for p in t.partitions:
            try:
                low, high = c.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout_s)
            except KafkaException as e:
                raise DeliveryError(f"Kafka at {bootstrap}: {topic} partition {p}: {e.args[0].str()}") from None
            if high > low:
                ends[p] = high
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in ends])
        records, done = [], set()
        deadline = timerange.now_us() + int(timeout_s * 1_000_000)
        while len(done) < len(ends):
            if timerange.now_us() > deadline:
                raise DeliveryError(f"Kafka at {bootstrap}: {topic} not read to its end within {timeout_s:g} s")
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:
                    raise DeliveryError(f"Kafka at {bootstrap}: this principal may not read {topic}")
                continue
            try:
                records.append(decode(m.value()))
            except Exception:  # noqa: BLE001 - hostile or foreign record: not a command
                pass
            if m.offset() + 1 >= ends[m.partition()]:
                done.add(m.partition())
        return sorted(records, key=lambda r: r["issued_at_us"])
    finally:
        c.close()


STATUS_COLUMNS = ["scope", "host", "protection", "since_us", "operator", "reason", "command_id"]


def switches(records):
    """The kill switches the commands set: {key: the last PROTECTION_ON/OFF command}, key the host
    or CLUSTER_KEY."""
    out = {}
    for r in records:
        if r["command"] in ("PROTECTION_ON", "PROTECTION_OFF"):
            out[r["host"] or CLUSTER_KEY] = r
    return out


def status_rows(records, host=None):
    """Rows of STATUS_COLUMNS: the cluster first (on when never switched), then each host switched
    off; with host, its effective state alone (off when the cluster or the host is off)."""

    def row(scope, h, r, state=None):
        if r is None:
            return (scope, h, state or "on", 0, "", "never switched", "")
        on = r["command"] == "PROTECTION_ON"
        return (
            scope,
            h,
            state or ("on" if on else "off"),
            r["issued_at_us"],
            r["operator"],
            r["reason"],
            r["command_id"],
        )

    sw = switches(records)
    cluster = sw.get(CLUSTER_KEY)
    if host is not None:
        if cluster is not None and cluster["command"] == "PROTECTION_OFF":
            return [row("cluster", host, cluster, "off")]
        return [row("host", host, sw.get(host))]
    off = [h for h in sorted(sw) if h != CLUSTER_KEY and sw[h]["command"] == "PROTECTION_OFF"]
    return [row("cluster", "*", cluster)] + [row("host", h, sw[h]) for h in off]


def run_status(args, out):
    if args.host is not None:
        _name("host", args.host)
    records = read_commands(args.settings.kafka, args.timeout, args.topic, args.settings.kafka_client_file)
    print(output.rows_text(args.output, STATUS_COLUMNS, status_rows(records, args.host)), file=out)
    return 0
