"""The Python mirror of names that C, Java and Python share: the Kafka topics, the record each
carries, and the enum symbols the tools branch on. Written by hand from stack/kafka/topics.conf
and schemas/avro/*.avsc; the one place to replace when they are generated from schemas/.
Standard library only."""

SAMPLES = "cpi2.samples"
HOST_METRICS = "cpi2.host-metrics"
SPECS = "cpi2.specs"
INCIDENTS = "cpi2.incidents"
ACTIONS = "cpi2.actions"
CONTROL = "cpi2.control"
OUTCOMES = "cpi2.outcomes"
DEAD_LETTER = "cpi2.dead-letter"

# Topic -> the Avro record on it (host metrics are Telegraf's JSON, no record).
TOPIC_RECORDS = {
    SAMPLES: "CpiSample",
    SPECS: "CpiSpec",
    INCIDENTS: "Incident",
    ACTIONS: "EnforcementAction",
    CONTROL: "ControlCommand",
    OUTCOMES: "CapOutcome",
    DEAD_LETTER: "DeadLetter",
}

# ControlCommand.kind's symbols
COMMAND_KINDS = ("CAP", "UNCAP", "PROTECTION_OFF", "PROTECTION_ON")
