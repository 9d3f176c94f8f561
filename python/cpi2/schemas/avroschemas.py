"""Load the project's Avro schemas, inline shared types, and compute fingerprints.

The .avsc files under schemas/avro/ may refer to shared named types (TaskClass) by name.
Readers in C and Python need each message schema self-contained, so this module resolves
those references the same way Java's Schema.Parser does, then computes the Parsing Canonical
Form and the CRC-64-AVRO fingerprint that single-object encoding puts after C3 01.
Standard library only: the C build runs this before any virtualenv exists.
"""

import json
import os

from cpi2 import repo

AVRO_DIR = str(repo.SCHEMAS_DIR / "avro")
VERSIONS_DIR = str(repo.SCHEMAS_DIR / "versions")

PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
NAMED = {"record", "enum", "fixed", "error"}

# Schemas that are messages on Kafka; the rest (TaskClass) are shared parts of them.
MESSAGES = ["CpiSample", "CpiSpec", "Incident", "EnforcementAction", "ControlCommand", "CapOutcome", "DeadLetter"]


def _fullname(name, namespace):
    if "." in name or not namespace:
        return name
    return namespace + "." + name


def load_sources(avro_dir=AVRO_DIR):
    """Every .avsc under avro_dir, by full name of its top-level type."""
    out = {}
    for fn in sorted(os.listdir(avro_dir)):
        if fn.endswith(".avsc"):
            with open(os.path.join(avro_dir, fn), encoding="utf-8") as f:
                doc = json.load(f)
            out[_fullname(doc["name"], doc.get("namespace"))] = doc
    return out


def inline(schema, sources, namespace=None, defined=None):
    """Return schema with references to other files' named types replaced by their definition
    at first use (later uses stay references), as one self-contained schema."""
    if defined is None:
        defined = set()
    if isinstance(schema, str):
        if schema in PRIMITIVES:
            return schema
        full = _fullname(schema, namespace)
        if full in defined:
            return full
        if full in sources:
            return inline(sources[full], sources, None, defined)
        raise ValueError("unknown type %r" % schema)
    if isinstance(schema, list):
        return [inline(s, sources, namespace, defined) for s in schema]
    t = schema["type"]
    if t in NAMED:
        ns = schema.get("namespace", namespace)
        full = _fullname(schema["name"], ns)
        if "." in schema["name"]:
            ns = full.rsplit(".", 1)[0]
        defined.add(full)
        out = dict(schema)
        if t in ("record", "error"):
            out["fields"] = []
            for fld in schema["fields"]:
                f2 = dict(fld)
                f2["type"] = inline(fld["type"], sources, ns, defined)
                out["fields"].append(f2)
        return out
    if t == "array":
        return dict(schema, items=inline(schema["items"], sources, namespace, defined))
    if t == "map":
        return dict(schema, values=inline(schema["values"], sources, namespace, defined))
    return schema


def canonical(schema, namespace=None, seen=None):
    """Avro Parsing Canonical Form, as a compact JSON string."""
    if seen is None:
        seen = set()
    if isinstance(schema, str):
        if schema in PRIMITIVES:
            return json.dumps(schema)
        return json.dumps(_fullname(schema, namespace))
    if isinstance(schema, list):
        return "[" + ",".join(canonical(s, namespace, seen) for s in schema) + "]"
    t = schema["type"]
    if t in PRIMITIVES:
        return json.dumps(t)
    if t in NAMED:
        ns = schema.get("namespace", namespace)
        full = _fullname(schema["name"], ns)
        if "." in schema["name"]:
            ns = full.rsplit(".", 1)[0]
        if full in seen:
            return json.dumps(full)
        seen.add(full)
        parts = ['"name":' + json.dumps(full), '"type":' + json.dumps(t)]
        if t in ("record", "error"):
            fields = []
            for fld in schema["fields"]:
                fields.append('{"name":%s,"type":%s}' % (json.dumps(fld["name"]), canonical(fld["type"], ns, seen)))
            parts.append('"fields":[' + ",".join(fields) + "]")
        elif t == "enum":
            parts.append('"symbols":' + json.dumps(schema["symbols"], separators=(",", ":")))
        else:
            parts.append('"size":%d' % schema["size"])
        return "{" + ",".join(parts) + "}"
    if t == "array":
        return '{"type":"array","items":%s}' % canonical(schema["items"], namespace, seen)
    if t == "map":
        return '{"type":"map","values":%s}' % canonical(schema["values"], namespace, seen)
    raise ValueError("unknown schema %r" % (schema,))


_EMPTY = 0xC15D213AA4D7A795
_TABLE = []
for _i in range(256):
    _fp = _i
    for _ in range(8):
        _fp = (_fp >> 1) ^ (_EMPTY & -(_fp & 1))
    _TABLE.append(_fp)


def fingerprint(canonical_form):
    """CRC-64-AVRO (Rabin) fingerprint of a canonical form, as an unsigned integer."""
    fp = _EMPTY
    for b in canonical_form.encode("utf-8"):
        fp = (fp >> 8) ^ _TABLE[(fp ^ b) & 0xFF]
    return fp


def message_schemas(avro_dir=AVRO_DIR):
    """The current self-contained schema of every message, by short name."""
    sources = load_sources(avro_dir)
    return {m: inline(sources["org.cpi2.schema." + m], sources) for m in MESSAGES}


def archived_versions(versions_dir=VERSIONS_DIR):
    """{message: [(version, schema), ...]} for every schema version ever published."""
    out = {}
    for m in MESSAGES:
        d = os.path.join(versions_dir, m)
        vs = []
        if os.path.isdir(d):
            for fn in os.listdir(d):
                if fn.startswith("v") and fn.endswith(".avsc"):
                    with open(os.path.join(d, fn), encoding="utf-8") as f:
                        vs.append((int(fn[1:-5]), json.load(f)))
        out[m] = sorted(vs, key=lambda v: v[0])
    return out
