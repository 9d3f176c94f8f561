#!/usr/bin/env python3
"""schemagen: archive schema versions and generate the shared names (python -m cpi2.schemas.schemagen).

The shared names are the Kafka topics of schemas/topics.conf (name, record) and, from each
message's newest version under schemas/versions/, the symbols of every enum and the fields of
every message. C gets them at build time; the Java class and the Python module are committed,
and `check` fails when either differs from what `generate` writes.

schemagen.py archive          add versions/<Msg>/v<N+1>.avsc for every message whose current
                              schema differs from its newest archived version
schemagen.py generate         write the Java class org.cpi2.wire.Topics and python/cpi2/names.py
schemagen.py check            fail if a current schema is not archived, or a generated file
                              is stale (CI guard)
schemagen.py c-header OUT     write the C header: every archived version's JSON and
                              fingerprint, newest last, for the C encoder and decoder
schemagen.py c-names DIR      write DIR/cpi2_names_gen.h and DIR/cpi2_names_gen.c: topic
                              macros, enum symbol tables and field lists for C
schemagen.py fingerprints     print each message's current fingerprint
"""

import json
import os
import re
import sys

from cpi2 import repo
from cpi2.schemas import avroschemas as A

TOPICS_CONF = str(repo.SCHEMAS_DIR / "topics.conf")
JAVA_TOPICS = str(repo.SCHEMAS_DIR / "src" / "main" / "java" / "org" / "cpi2" / "wire" / "Topics.java")
PY_NAMES = str(repo.ROOT / "python" / "cpi2" / "names.py")
TOPIC_RE = re.compile(r"^[A-Za-z0-9._-]{1,249}$")
SYMBOL_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")


def _pending():
    current = A.message_schemas()
    archived = A.archived_versions()
    pending = {}
    for m, schema in current.items():
        vs = archived[m]
        if not vs or A.canonical(vs[-1][1]) != A.canonical(schema) or vs[-1][1] != schema:
            pending[m] = (vs[-1][0] + 1 if vs else 1, schema)
    return pending


def cmd_archive():
    for m, (v, schema) in _pending().items():
        d = os.path.join(A.VERSIONS_DIR, m)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "v%d.avsc" % v)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(schema, f, indent=2)
            f.write("\n")
        print("archived", path)
    return 0


def cmd_check():
    pending = _pending()
    for m, (v, _) in pending.items():
        print(
            "schemagen: %s changed but is not archived; run `make -C schemas archive` (would be v%d)" % (m, v),
            file=sys.stderr,
        )
    stale = [] if pending else stale_files()
    for path in stale:
        print(
            "schemagen: %s is stale; run `make -C schemas generate`" % os.path.relpath(path, repo.ROOT),
            file=sys.stderr,
        )
    return 1 if pending or stale else 0


def read_topics(path=TOPICS_CONF):
    """[(topic, record or None, what)] from topics.conf, in its order; ValueError names the
    line of a malformed entry (columns: topic, 5 settings, record, what)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            cols = line.split(None, 7)
            if not cols or cols[0].startswith("#"):
                continue
            if len(cols) < 7 or not TOPIC_RE.match(cols[0]):
                raise ValueError(
                    "%s:%d: want topic, partitions, retention.ms, retention.bytes, "
                    "cleanup.policy, segment.ms, record, what" % (path, n)
                )
            record = None if cols[6] == "-" else cols[6]
            if record is not None and record not in A.MESSAGES:
                raise ValueError("%s:%d: record %s is not a message of schemas/avro" % (path, n, record))
            out.append((cols[0], record, cols[7].strip() if len(cols) > 7 else ""))
    return out


def _snake(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def topic_constant(topic):
    """SAMPLES for cpi2.samples, DEAD_LETTER for cpi2.dead-letter."""
    return re.sub(r"[.-]", "_", topic.split(".", 1)[-1] if topic.startswith("cpi2.") else topic).upper()


def _enums_of(schema, found):
    if isinstance(schema, list):
        for s in schema:
            _enums_of(s, found)
    elif isinstance(schema, dict):
        t = schema["type"]
        if t == "enum":
            found.setdefault(schema["name"].rsplit(".", 1)[-1], list(schema["symbols"]))
        elif t in ("record", "error"):
            for fld in schema["fields"]:
                _enums_of(fld["type"], found)
        elif t == "array":
            _enums_of(schema["items"], found)
        elif t == "map":
            _enums_of(schema["values"], found)


def shared_names(topics_conf=TOPICS_CONF, versions_dir=A.VERSIONS_DIR):
    """The names C, Java and Python share: {"topics": [(topic, record, what)], "enums":
    {EnumName: [symbols]}, "fields": {Message: [field names]}}, enums and fields from each
    message's newest archived version (which check keeps equal to schemas/avro)."""
    topics = read_topics(topics_conf)
    enums, fields = {}, {}
    for m, vs in A.archived_versions(versions_dir).items():
        if not vs:
            raise ValueError("%s has no archived version" % m)
        schema = vs[-1][1]
        _enums_of(schema, enums)
        fields[m] = [f["name"] for f in schema["fields"]]
    names = [topic_constant(t) for t, _, _ in topics] + [_snake(e).upper() for e in enums]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError("two shared names would be spelled %s" % ", ".join(dup))
    for e, syms in enums.items():
        bad = [s for s in syms if not SYMBOL_RE.match(s) or s == "SYMBOLS_LEN"]
        if bad:
            raise ValueError("%s: symbols %s cannot be constants" % (e, ", ".join(bad)))
    return {"topics": topics, "enums": enums, "fields": fields}


def _generated_by(source):
    return "Generated by python/cpi2/schemas/schemagen.py from %s. Do not edit." % source


def c_names(names):
    """(header, source) of C: CPI2_TOPIC_* macros, an enum and a symbol table per Avro enum,
    a NULL-terminated field list per message."""
    h = [
        "/* %s */" % _generated_by("schemas/topics.conf and schemas/versions/"),
        "#ifndef CPI2_NAMES_GEN_H",
        "#define CPI2_NAMES_GEN_H",
        "",
        "/* Kafka topics (schemas/topics.conf) */",
    ]
    c = [
        "/* %s */" % _generated_by("schemas/topics.conf and schemas/versions/"),
        '#include "cpi2_names_gen.h"',
        "",
        "#include <stddef.h>",
    ]
    for t, record, what in names["topics"]:
        h.append("#define CPI2_TOPIC_%s %s /* %s: %s */" % (topic_constant(t), _c_string(t), record or "JSON", what))
    for e, syms in names["enums"].items():
        up = "CPI2_" + _snake(e).upper()
        h += ["", "/* The symbols of the enum %s, by index */" % e, "enum cpi2_%s {" % _snake(e)]
        h += ["\t%s_%s = %d," % (up, s, i) for i, s in enumerate(syms)]
        h += ["};", "#define %s_SYMBOLS_LEN %d" % (up, len(syms))]
        h.append("extern const char *const cpi2_%s_symbols[%s_SYMBOLS_LEN];" % (_snake(e), up))
        c += ["", "const char *const cpi2_%s_symbols[%s_SYMBOLS_LEN] = {" % (_snake(e), up)]
        c += ["\t%s," % _c_string(s) for s in syms] + ["};"]
    for m, flds in names["fields"].items():
        up = "CPI2_" + _snake(m).upper()
        h += ["", "/* The fields of %s in schema order, NULL-terminated */" % m]
        h += ["#define %s_FIELDS_LEN %d" % (up, len(flds))]
        h.append("extern const char *const cpi2_%s_fields[%s_FIELDS_LEN + 1];" % (_snake(m), up))
        c += ["", "const char *const cpi2_%s_fields[%s_FIELDS_LEN + 1] = {" % (_snake(m), up)]
        c += ["\t%s," % _c_string(f) for f in flds] + ["\tNULL,", "};"]
    h += ["", "#endif", ""]
    c += [""]
    return "\n".join(h), "\n".join(c)


def _java_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _javadoc(text, indent="  ", width=100):
    """A member's javadoc as google-java-format lays it out: one line if it fits, else filled."""
    one = "%s/** %s */" % (indent, text)
    if len(one) <= width:
        return [one]
    lines, cur = [], ""
    for word in text.split():
        if cur and len(indent) + 3 + len(cur) + 1 + len(word) > width:
            lines.append(cur)
            cur = word
        else:
            cur = (cur + " " + word) if cur else word
    lines.append(cur)
    return ["%s/**" % indent] + ["%s * %s" % (indent, ln) for ln in lines] + ["%s */" % indent]


def java_topics(names):
    """org.cpi2.wire.Topics, in google-java-format's layout (Spotless checks it)."""
    out = [
        "// %s" % _generated_by("schemas/topics.conf"),
        "package org.cpi2.wire;",
        "",
        "import java.util.Map;",
        "",
        "/** The Kafka topics and the record each holds (schemas/topics.conf). */",
        "public final class Topics {",
    ]
    for t, record, what in names["topics"]:
        out += _javadoc("%s: %s." % (record or "JSON", what))
        decl = "  public static final String %s = %s;" % (topic_constant(t), _java_string(t))
        if len(decl) > 100:
            decl = "  public static final String %s =\n      %s;" % (topic_constant(t), _java_string(t))
        out += [decl, ""]
    out += ["  /** The short name of the Avro record on each topic; topics of JSON are absent. */"]
    out += ["  public static final Map<String, String> RECORDS =", "      Map.ofEntries("]
    pairs = [(topic_constant(t), r) for t, r, _ in names["topics"] if r]
    out += [
        "          Map.entry(%s, %s)%s" % (c, _java_string(r), "," if i < len(pairs) - 1 else ");")
        for i, (c, r) in enumerate(pairs)
    ]
    out += ["", "  private Topics() {}", "}", ""]
    return "\n".join(out)


def python_names(names):
    """cpi2.names, in ruff format's layout (make -C python test checks it)."""
    out = [
        '"""The names that C, Java and Python share: the Kafka topics, the record on each, the symbols',
        "of every enum and the fields of every message. Generated by python/cpi2/schemas/schemagen.py",
        "from schemas/topics.conf and schemas/versions/ (make -C schemas generate); do not edit:",
        'make -C schemas test fails when this file is stale. Standard library only."""',
        "",
        "# Kafka topics",
    ]
    for t, record, what in names["topics"]:
        out.append("%s = %s  # %s: %s" % (topic_constant(t), json.dumps(t), record or "JSON", what))
    out += ["", "# Every topic, in the order of schemas/topics.conf", "TOPICS = ("]
    out += ["    %s," % topic_constant(t) for t, _, _ in names["topics"]] + [")"]
    out += ["", "# Topic -> the Avro record on it (topics of JSON are absent)", "TOPIC_RECORDS = {"]
    out += ["    %s: %s," % (topic_constant(t), json.dumps(r)) for t, r, _ in names["topics"] if r] + ["}"]
    for e, syms in names["enums"].items():
        out += ["", "# The symbols of the enum %s, by index" % e, "%s = (" % _snake(e).upper()]
        out += ["    %s," % json.dumps(s) for s in syms] + [")"]
    out += ["", "# Each message's fields, in schema order", "FIELDS = {"]
    for m, flds in names["fields"].items():
        out += ["    %s: (" % json.dumps(m)] + ["        %s," % json.dumps(f) for f in flds] + ["    ),"]
    out += ["}", ""]
    return "\n".join(out)


def generated_files(names=None):
    """{path: text} of every committed generated file."""
    names = names or shared_names()
    return {JAVA_TOPICS: java_topics(names), PY_NAMES: python_names(names)}


def _write(path, text):
    tmp = path + ".tmp"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def cmd_generate():
    for path, text in generated_files().items():
        try:
            with open(path, encoding="utf-8") as f:
                same = f.read() == text
        except FileNotFoundError:
            same = False
        if not same:
            _write(path, text)
            print("generated", os.path.relpath(path, repo.ROOT))
    return 0


def stale_files(names=None):
    """The committed generated files that differ from what generate writes."""
    out = []
    for path, text in generated_files(names).items():
        try:
            with open(path, encoding="utf-8") as f:
                if f.read() == text:
                    continue
        except FileNotFoundError:
            pass
        out.append(path)
    return out


def cmd_c_names(out_dir):
    h, c = c_names(shared_names())
    _write(os.path.join(out_dir, "cpi2_names_gen.h"), h)
    _write(os.path.join(out_dir, "cpi2_names_gen.c"), c)
    return 0


def _c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def cmd_c_header(out):
    archived = A.archived_versions()
    lines = [
        "/* Generated by python/cpi2/schemas/schemagen.py from schemas/versions/. Do not edit. */",
        "#ifndef CPI2_SCHEMAS_GEN_H",
        "#define CPI2_SCHEMAS_GEN_H",
        "#include <stdint.h>",
        "",
        "struct cpi2_schema_version {",
        '\tconst char *message; /* short record name, e.g. "CpiSample" */',
        "\tint version;         /* N of versions/<message>/vN.avsc */",
        "\tuint64_t fingerprint; /* CRC-64-AVRO of the parsing canonical form */",
        "\tconst char *json;    /* the self-contained schema */",
        "};",
        "",
        "static const struct cpi2_schema_version cpi2_schema_versions[] = {",
    ]
    for m in A.MESSAGES:
        for v, schema in archived[m]:
            fp = A.fingerprint(A.canonical(schema))
            js = json.dumps(schema, separators=(",", ":"))
            lines.append("\t{%s, %d, UINT64_C(0x%016x), %s}," % (_c_string(m), v, fp, _c_string(js)))
    lines += [
        "};",
        "",
        "#define CPI2_SCHEMA_VERSIONS_LEN (sizeof(cpi2_schema_versions) / sizeof(cpi2_schema_versions[0]))",
        "",
        "#endif",
        "",
    ]
    _write(out, "\n".join(lines))
    return 0


def cmd_fingerprints():
    for m, schema in A.message_schemas().items():
        print("%-18s %016x" % (m, A.fingerprint(A.canonical(schema))))
    return 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "archive":
        return cmd_archive()
    if len(argv) >= 2 and argv[1] == "check":
        return cmd_check()
    if len(argv) >= 2 and argv[1] == "generate":
        return cmd_generate()
    if len(argv) == 3 and argv[1] == "c-header":
        return cmd_c_header(argv[2])
    if len(argv) == 3 and argv[1] == "c-names":
        return cmd_c_names(argv[2])
    if len(argv) >= 2 and argv[1] == "fingerprints":
        return cmd_fingerprints()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
