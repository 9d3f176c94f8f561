"""The project's wire format in Python (tests and tools): Avro single-object encoding.

C3 01, the 8-byte little-endian CRC-64-AVRO fingerprint of the writer schema, the Avro binary
payload. Decoding resolves every archived writer version to the current reader schema.
Needs fastavro (in the project's .venv).
"""

import io
import struct

import fastavro

from cpi2.schemas import avroschemas as A

MAGIC = b"\xc3\x01"

_current = {}  # message -> (parsed schema, fingerprint)
_writers = {}  # fingerprint -> (message, parsed writer schema)


def _load():
    if _current:
        return
    for m, schema in A.message_schemas().items():
        _current[m] = (fastavro.parse_schema(schema), A.fingerprint(A.canonical(schema)))
    for m, versions in A.archived_versions().items():
        for _, schema in versions:
            _writers[A.fingerprint(A.canonical(schema))] = (m, fastavro.parse_schema(schema))


def fingerprint(message):
    """The current schema's fingerprint of a message ("CpiSample")."""
    _load()
    return _current[message][1]


def encode(message, record):
    """Encode a dict as the current version of message, with the single-object header."""
    _load()
    schema, fp = _current[message]
    buf = io.BytesIO()
    buf.write(MAGIC)
    buf.write(struct.pack("<Q", fp))
    fastavro.schemaless_writer(buf, schema, record)
    return buf.getvalue()


class WireError(ValueError):
    """A message that cannot be decoded; str() is the reason."""


def decode(message, data):
    """Decode bytes written by any archived version of message into the current schema."""
    _load()
    if data is None or len(data) < 10:
        raise WireError("message too short for single-object encoding: %d bytes" % (len(data or b"")))
    if data[:2] != MAGIC:
        raise WireError("not Avro single-object encoding: bad magic %s" % data[:2].hex())
    (fp,) = struct.unpack("<Q", data[2:10])
    if fp not in _writers:
        raise WireError("unknown writer schema fingerprint %016x" % fp)
    writer_msg, writer = _writers[fp]
    if writer_msg != message:
        raise WireError("expected %s, got a %s" % (message, writer_msg))
    try:
        return fastavro.schemaless_reader(io.BytesIO(data[10:]), writer, _current[message][0])
    except Exception as e:  # fastavro raises many types on malformed payloads
        raise WireError("malformed %s payload: %s" % (message, e)) from e
