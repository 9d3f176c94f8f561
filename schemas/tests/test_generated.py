"""The shared names generated from schemas/: the committed outputs (org.cpi2.wire.Topics,
cpi2.names) are current, they agree with the current schemas under avro/, adding a topic or an
enum symbol in a copy of schemas/ changes every output and makes `check` fail, and malformed
topics.conf lines are refused with the line's number."""

import importlib
import json
import os
import shutil

import pytest

from cpi2 import names
from cpi2.schemas import avroschemas as A
from cpi2.schemas import schemagen as G


def test_committed_outputs_are_current():
    assert G.stale_files() == []
    assert G.main(["schemagen", "check"]) == 0


def test_python_names_match_the_current_schemas():
    importlib.reload(names)
    current = A.message_schemas()
    for m, schema in current.items():
        assert names.FIELDS[m] == tuple(f["name"] for f in schema["fields"])
    enums = {}
    for schema in current.values():
        G._enums_of(schema, enums)
    assert set(enums) == {
        "TaskClass",
        "CounterSource",
        "Decision",
        "ActionKind",
        "ActionCause",
        "CommandKind",
        "Verdict",
    }
    for e, symbols in enums.items():
        assert getattr(names, G._snake(e).upper()) == tuple(symbols)
    assert names.COMMAND_KIND == ("CAP", "UNCAP", "PROTECTION_OFF", "PROTECTION_ON")
    assert set(names.TOPIC_RECORDS.values()) <= set(A.MESSAGES)


def test_topics_match_topics_conf():
    conf = os.path.join(A.repo.SCHEMAS_DIR, "topics.conf")
    rows = [ln.split() for ln in open(conf, encoding="utf-8") if ln.strip() and not ln.startswith("#")]
    assert names.TOPICS == tuple(r[0] for r in rows)
    assert names.TOPIC_RECORDS == {r[0]: r[6] for r in rows if r[6] != "-"}
    assert (names.SAMPLES, names.HOST_METRICS, names.DEAD_LETTER) == (
        "cpi2.samples",
        "cpi2.host-metrics",
        "cpi2.dead-letter",
    )
    assert names.HOST_METRICS not in names.TOPIC_RECORDS
    java = open(G.JAVA_TOPICS, encoding="utf-8").read()
    for r in rows:
        assert 'public static final String %s = "%s";' % (G.topic_constant(r[0]), r[0]) in java


@pytest.fixture
def schemas_copy(tmp_path):
    shutil.copy(G.TOPICS_CONF, tmp_path / "topics.conf")
    shutil.copytree(A.VERSIONS_DIR, tmp_path / "versions")
    return tmp_path


def _outputs(d):
    n = G.shared_names(str(d / "topics.conf"), str(d / "versions"))
    return n, G.generated_files(n), G.c_names(n)


def test_adding_a_topic_changes_every_output(schemas_copy):
    with open(schemas_copy / "topics.conf", "a", encoding="utf-8") as f:
        f.write("cpi2.verdict-log  1  -1  -1  delete  604800000  CapOutcome  a test topic\n")
    n, files, (h, c) = _outputs(schemas_copy)
    assert sorted(G.stale_files(n)) == sorted([G.JAVA_TOPICS, G.PY_NAMES])
    assert 'VERDICT_LOG = "cpi2.verdict-log"' in files[G.PY_NAMES]
    assert '    VERDICT_LOG: "CapOutcome",\n' in files[G.PY_NAMES]
    assert 'public static final String VERDICT_LOG = "cpi2.verdict-log";' in files[G.JAVA_TOPICS]
    assert 'Map.entry(VERDICT_LOG, "CapOutcome")' in files[G.JAVA_TOPICS]
    assert '#define CPI2_TOPIC_VERDICT_LOG "cpi2.verdict-log"' in h


def test_adding_an_enum_symbol_changes_every_output(schemas_copy):
    d = schemas_copy / "versions" / "ControlCommand"
    newest = max(int(p[1:-5]) for p in os.listdir(d))
    schema = json.loads((d / ("v%d.avsc" % newest)).read_text())
    for fld in schema["fields"]:
        if fld["name"] == "command":
            fld["type"]["symbols"].append("DRAIN")
    (d / ("v%d.avsc" % (newest + 1))).write_text(json.dumps(schema))
    n, files, (h, c) = _outputs(schemas_copy)
    assert G.stale_files(n) == [G.PY_NAMES]  # Java has Avro's own generated enum
    assert '    "DRAIN",\n)' in files[G.PY_NAMES]
    assert "CPI2_COMMAND_KIND_DRAIN = 4," in h and "#define CPI2_COMMAND_KIND_SYMBOLS_LEN 5" in h
    assert '\t"DRAIN",\n};' in c


@pytest.mark.parametrize(
    "line, message",
    [
        ("cpi2.x  1  -1  -1  delete  1\n", "want topic, partitions"),
        ("cpi2.x  1  -1  -1  delete  1  NoSuchRecord  what\n", "NoSuchRecord is not a message"),
        ("cpi2.x/y  1  -1  -1  delete  1  -  what\n", "want topic, partitions"),
        ("cpi2.control  1  -1  -1  delete  1  -  twice\n", "CONTROL"),
    ],
)
def test_malformed_topics_conf_is_refused(schemas_copy, line, message):
    with open(schemas_copy / "topics.conf", "a", encoding="utf-8") as f:
        f.write(line)
    with pytest.raises(ValueError, match=message):
        _outputs(schemas_copy)
