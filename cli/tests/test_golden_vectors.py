"""The Python leg of the C/Java/Python golden-vector agreement, through the CLI's codec
(cpi2.cli.control.encode/decode, which the control commands use): every vector of
schemas/golden/vectors.json encodes to exactly its hex and decodes back to its value."""

import io
import json

import fastavro
import pytest

from cpi2 import repo
from cpi2.cli import control
from cpi2.schemas import avroschemas, wire

VECTORS = json.loads((repo.ROOT / "schemas" / "golden" / "vectors.json").read_text())["vectors"]


def _value(vec):
    """The vector's Avro JSON encoding ({"double": 1.5} unions) as a Python record."""
    schema = fastavro.parse_schema(avroschemas.message_schemas()[vec["message"]])
    return next(fastavro.json_reader(io.StringIO(json.dumps(vec["value"])), schema))


@pytest.mark.parametrize("vec", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector_encodes_to_its_hex(vec):
    data = wire.encode(vec["message"], _value(vec))
    assert data.hex() == vec["hex"]
    assert data[:2] == b"\xc3\x01"
    fp = avroschemas.fingerprint(avroschemas.canonical(avroschemas.message_schemas()[vec["message"]]))
    assert data[2:10] == fp.to_bytes(8, "little")
    assert "%016x" % fp == vec["fingerprint"]


@pytest.mark.parametrize("vec", [v for v in VECTORS if v["message"] == "ControlCommand"], ids=lambda v: v["name"])
def test_cli_codec_round_trips_control_vectors(vec):
    value = _value(vec)
    assert control.encode(value).hex() == vec["hex"]
    assert control.decode(bytes.fromhex(vec["hex"])) == value


def test_there_are_control_command_vectors():
    assert any(v["message"] == "ControlCommand" for v in VECTORS)


def test_command_built_by_the_cli_encodes_like_the_schema_says():
    rec = control.command(
        "CAP",
        host="h1",
        task="cpi2.slice/batch-7",
        cap_cpu=0.1,
        duration_s=300,
        operator="alice",
        reason="test",
        now_us=1_700_000_000_000_000,
    )
    data = control.encode(rec)
    # Decoding the payload with fastavro directly, without the project's codec, gives the record back.
    schema = fastavro.parse_schema(avroschemas.message_schemas()["ControlCommand"])
    assert fastavro.schemaless_reader(io.BytesIO(data[10:]), schema) == rec
    assert control.decode(data) == rec
