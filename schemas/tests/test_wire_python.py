"""The Python leg of the golden vectors: schemagen's fingerprints and cpi2.schemas.wire's encoding
agree byte for byte with the vectors that Java and C check too."""

import io
import json
import os
import random

import fastavro
import pytest

from cpi2.schemas import avroschemas as A
from cpi2.schemas import wire

with open(os.path.join(os.path.dirname(__file__), "..", "golden", "vectors.json"), encoding="utf-8") as f:
    VECTORS = json.load(f)["vectors"]


def _value(vec):
    schema = fastavro.parse_schema(A.message_schemas()[vec["message"]])
    return next(fastavro.json_reader(io.StringIO(json.dumps(vec["value"])), schema))


@pytest.mark.parametrize("vec", VECTORS, ids=[v["name"] for v in VECTORS])
def test_python_fingerprint_matches_java(vec):
    assert "%016x" % wire.fingerprint(vec["message"]) == vec["fingerprint"]


@pytest.mark.parametrize("vec", VECTORS, ids=[v["name"] for v in VECTORS])
def test_python_encodes_vector_to_its_hex(vec):
    assert wire.encode(vec["message"], _value(vec)).hex() == vec["hex"]


@pytest.mark.parametrize("vec", VECTORS, ids=[v["name"] for v in VECTORS])
def test_python_decodes_vector_hex(vec):
    assert wire.decode(vec["message"], bytes.fromhex(vec["hex"])) == _value(vec)


def test_every_message_has_a_vector():
    assert {v["message"] for v in VECTORS} == set(A.MESSAGES)


def test_canonical_form_of_the_avro_spec_example():
    # Independent check of the fingerprint algorithm: CRC-64-AVRO of "int" (Avro spec test value).
    assert A.fingerprint(A.canonical("int")) == 0x7275D51A3F395C8F


def test_current_schemas_are_archived():
    current = A.message_schemas()
    for m, versions in A.archived_versions().items():
        assert versions, m
        assert A.canonical(versions[-1][1]) == A.canonical(current[m]), m


def test_malformed_messages_get_a_reason():
    rnd = random.Random(7)
    good = bytes.fromhex(VECTORS[0]["hex"])
    for i in range(500):
        data = (
            good[: rnd.randrange(len(good))] if i % 2 else bytes(rnd.randrange(256) for _ in range(rnd.randrange(40)))
        )
        with pytest.raises(wire.WireError) as e:
            wire.decode("CpiSample", data)
        assert str(e.value)
    with pytest.raises(wire.WireError, match="expected CpiSample"):
        wire.decode("CpiSample", bytes.fromhex(next(v for v in VECTORS if v["message"] == "Incident")["hex"]))
