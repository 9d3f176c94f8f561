"""A record's producer, bound to its host: each host's agents sign what they write to Kafka with a
key of their host's own, which the detection job checks (the Kafka broker does not say who
produced a record, so a header alone would prove nothing).

- A host's key: HMAC-SHA256(master, b"cpi2 host key v1\\0" + host), 32 bytes. The master stays
  with the issuer and the job; a host gets only its own key (a simulator of many hosts, the
  master).
- A record's headers: `cpi2-host` (the host, UTF-8), `cpi2-key` (the master's id, e.g. "1", for
  rotation), `cpi2-mac` (the first 16 bytes of HMAC-SHA256(the host's key, topic + b"\\0" +
  value)).
- The job reads the masters from a file of `ID=HEX` lines (`--kafka.host-keys`); an agent signs
  with the `cpi2.host`, `cpi2.host.key`, `cpi2.host.key.id` (or `cpi2.host.master`) lines of its
  Kafka client file.

The same algorithm in C (libcpi2/src/hostauth.c) and Java (flink-jobs HostAuth); the shared test
vectors: schemas/golden/hostauth.json (`python -m cpi2.hostauth vectors` writes them).
"""

import hashlib
import hmac
import json
import sys

HEADER_HOST, HEADER_KEY_ID, HEADER_MAC = "cpi2-host", "cpi2-key", "cpi2-mac"
MAC_LEN = 16
KEY_LABEL = b"cpi2 host key v1\0"


def host_key(master: bytes, host: str) -> bytes:
    """The host's own key, derived from the master."""
    return hmac.new(master, KEY_LABEL + host.encode(), hashlib.sha256).digest()


def mac(key: bytes, topic: str, value: bytes) -> bytes:
    """The record's MAC under its host's key."""
    return hmac.new(key, topic.encode() + b"\0" + value, hashlib.sha256).digest()[:MAC_LEN]


def headers(key: bytes, key_id: str, host: str, topic: str, value: bytes):
    """The headers of a record of host's signed with key (a test or tool that plays the host;
    confluent_kafka's headers= takes this list)."""
    return [
        (HEADER_HOST, host.encode()),
        (HEADER_KEY_ID, key_id.encode()),
        (HEADER_MAC, mac(key, topic, value)),
    ]


def vectors():
    """The shared test vectors (schemas/golden/hostauth.json)."""
    master = bytes(range(32))
    rows = []
    for host, topic, value in (
        ("node-a", "cpi2.samples", b"\xc3\x01sample"),
        ("node-b", "cpi2.actions", b""),
        ("h\u00f4te-\u00e9", "cpi2.samples", bytes(range(256))),
    ):
        key = host_key(master, host)
        rows.append(
            {
                "host": host,
                "topic": topic,
                "value_hex": value.hex(),
                "host_key_hex": key.hex(),
                "mac_hex": mac(key, topic, value).hex(),
            }
        )
    return {
        "doc": "Host keys and record MACs (python/cpi2/hostauth.py): C, Java and Python must each compute exactly these",
        "headers": {"host": HEADER_HOST, "key_id": HEADER_KEY_ID, "mac": HEADER_MAC},
        "mac_len": MAC_LEN,
        "master_hex": master.hex(),
        "key_id": "1",
        "vectors": rows,
    }


if __name__ == "__main__":
    if sys.argv[1:] == ["vectors"]:
        print(json.dumps(vectors(), indent=2, ensure_ascii=False))
    elif len(sys.argv) == 4 and sys.argv[1] == "host-key":  # host-key MASTER_FILE_ID_LINE HOST
        print(host_key(bytes.fromhex(sys.argv[2]), sys.argv[3]).hex())
    else:
        raise SystemExit("usage: python -m cpi2.hostauth vectors | host-key MASTER_HEX HOST")
