"""Follows the pipeline's output topics and keeps the figures a person watches: incidents by
decision, caps applied/lifted/in force, outcomes by verdict, dead letters. Used by the demo's
progress line and by the end-to-end tests (which assert on what it saw)."""

import collections
import time
import uuid

from confluent_kafka import Consumer

from cpi2 import names
from cpi2.schemas import wire

TOPICS = {t: names.TOPIC_RECORDS[t] for t in (names.INCIDENTS, names.ACTIONS, names.OUTCOMES, names.DEAD_LETTER)}


class Monitor:
    """Reads the topics from their current end (or the beginning) without committing offsets."""

    def __init__(self, kafka_conf, from_beginning=False, sample_hosts=(), sample_signals=()):
        """kafka_conf: confluent-kafka settings (bootstrap.servers, and the principal's sign-in:
        stack.kafka_conf()). sample_hosts: also keep the CPI samples of these hosts (cpi2.samples, keyed by host),
        as self.samples[(host, task)] = [(window_start_us, cpi, cpu_usage), ...]; and, for each field
        of sample_signals (cpu_pressure, cpu_per_op...), self.signals[(host, task)] =
        [(window_start_us, {field: value}), ...]."""
        self.sample_hosts = {h.encode() for h in sample_hosts}
        self.sample_signals = tuple(sample_signals)
        self.samples = collections.defaultdict(list)
        self.signals = collections.defaultdict(list)
        self.consumer = Consumer(
            {
                **kafka_conf,
                "group.id": "cpi2-monitor-" + uuid.uuid4().hex[:8],
                "auto.offset.reset": "earliest" if from_beginning else "latest",
                "enable.auto.commit": False,
            }
        )
        self.assigned = False
        self.consumer.subscribe(
            list(TOPICS) + ([names.SAMPLES] if self.sample_hosts else []), on_assign=self._on_assign
        )
        self.incidents = []
        self.actions = []
        self.outcomes = []
        self.dead_letters = []
        self.undecodable = []
        self.caps = {}  # (host, task) -> expires_at_us of caps in force
        # ("Incident", incident_id) or ("EnforcementAction", action_id) -> wall-clock seconds when
        # this monitor first read it: the real delays between the outputs, whatever the speed of
        # a simulated fleet's clock.
        self.read_at = {}

    def _on_assign(self, consumer, partitions):
        self.assigned = True

    def join(self, timeout=60):
        """Polls until the group has assigned this consumer its partitions: with offsets reset
        to the latest, what is produced before that is never seen."""
        deadline = time.time() + timeout
        while not self.assigned and time.time() < deadline:
            self.poll(0.5)
        if not self.assigned:
            raise RuntimeError("monitor: no partitions assigned within %ds" % timeout)

    def poll(self, seconds=0.5, max_messages=10000):
        """Read what has arrived; returns the number of messages read."""
        n = 0
        msgs = self.consumer.consume(num_messages=max_messages, timeout=seconds)
        for m in msgs:
            if m.error():
                continue
            n += 1
            if m.topic() == names.SAMPLES:
                if m.key() in self.sample_hosts:
                    try:
                        r = wire.decode("CpiSample", m.value())
                    except wire.WireError as e:
                        self.undecodable.append((m.topic(), str(e)))
                        continue
                    self.samples[(r["host"], r["task"])].append((r["window_start_us"], r["cpi"], r["cpu_usage"]))
                    if self.sample_signals:
                        self.signals[(r["host"], r["task"])].append(
                            (r["window_start_us"], {k: r.get(k) for k in self.sample_signals})
                        )
                continue
            message = TOPICS[m.topic()]
            try:
                rec = wire.decode(message, m.value())
            except wire.WireError as e:
                self.undecodable.append((m.topic(), str(e)))
                continue
            if message == "Incident":
                self.incidents.append(rec)
                self.read_at.setdefault((message, rec["incident_id"]), time.time())
            elif message == "EnforcementAction":
                self.actions.append(rec)
                self.read_at.setdefault((message, rec["action_id"]), time.time())
                key = (rec["host"], rec["task"])
                if rec["kind"] in ("APPLIED", "RENEWED"):
                    self.caps[key] = rec["expires_at_us"]
                elif rec["kind"] == "RELEASED":
                    self.caps.pop(key, None)
            elif message == "CapOutcome":
                self.outcomes.append(rec)
            else:
                self.dead_letters.append(rec)
        return n

    def decisions(self):
        return collections.Counter(i["decision"] for i in self.incidents)

    def action_kinds(self):
        return collections.Counter(a["kind"] for a in self.actions)

    def verdicts(self):
        return collections.Counter(o["verdict"] for o in self.outcomes)

    def summary_line(self):
        d = self.decisions()
        k = self.action_kinds()
        return "incidents %d (throttle %d), caps applied %d, lifted %d, in force %d, outcomes %d, dead letters %d" % (
            len(self.incidents),
            d.get("THROTTLE", 0),
            k.get("APPLIED", 0),
            k.get("RELEASED", 0),
            len(self.caps),
            len(self.outcomes),
            len(self.dead_letters),
        )

    def close(self):
        self.consumer.close()
