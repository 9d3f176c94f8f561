"""The Python side of the host keys and record MACs: schemas/golden/hostauth.json is exactly what
cpi2.hostauth computes (C and Java check the same file), and openssl derives the same host key
(what stack/kafka/make-secrets.sh uses to issue a host's key)."""

import json
import os
import subprocess

from cpi2 import hostauth

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "hostauth.json")


def test_the_golden_file_is_what_python_computes():
    with open(GOLDEN) as f:
        assert json.load(f) == hostauth.vectors(), "run: python -m cpi2.hostauth vectors > schemas/golden/hostauth.json"


def test_openssl_derives_the_same_host_key():
    master = bytes(range(32))
    for host in ("node-a", "h\u00f4te-\u00e9"):
        out = subprocess.run(
            ["openssl", "dgst", "-sha256", "-mac", "HMAC", "-macopt", "hexkey:" + master.hex(), "-r"],
            input=hostauth.KEY_LABEL + host.encode(),
            capture_output=True,
            check=True,
        ).stdout.split()[0]
        assert out.decode() == hostauth.host_key(master, host).hex()
