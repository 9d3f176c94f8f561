"""Where the project's shared Python code lives, made importable: the forensics queries
(clickhouse/forensics.py, chclient.py, schema.py) and the wire format (schemas/tools/wire.py).
The CLI runs those modules; it never copies their SQL or their encoding."""
import os
import pathlib
import sys

ROOT = pathlib.Path(os.environ.get("CPI2_ROOT", pathlib.Path(__file__).resolve().parents[2]))
CLICKHOUSE_DIR = ROOT / "clickhouse"
SCHEMA_TOOLS_DIR = ROOT / "schemas" / "tools"
# The stack's ports: stack/stack.env, or the file STACK_ENV names (as for every make target).
STACK_ENV = pathlib.Path(os.environ.get("STACK_ENV") or ROOT / "stack" / "stack.env")
STACK_DIR = pathlib.Path(os.environ.get("STACK_DIR") or ROOT / ".stack")

for _d in (CLICKHOUSE_DIR, SCHEMA_TOOLS_DIR):
    if str(_d) not in sys.path:
        sys.path.insert(0, str(_d))


def stack_env():
    """KEY=value lines of stack/stack.env (ports of the local stack), {} when absent."""
    out = {}
    if STACK_ENV.is_file():
        for line in STACK_ENV.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, v = line.split("=", 1)
                out[k.strip()] = v.strip()
    return out


def default_clickhouse_url():
    env = stack_env()
    return os.environ.get("CPI2_CLICKHOUSE_URL") or "http://%s:%s" % (env.get("STACK_HOST", "127.0.0.1"), env.get("CLICKHOUSE_HTTP_PORT", "8123"))


def default_kafka_bootstrap():
    env = stack_env()
    return os.environ.get("CPI2_KAFKA_BOOTSTRAP") or "%s:%s" % (env.get("STACK_HOST", "127.0.0.1"), env.get("KAFKA_PORT", "9092"))


def default_kafka_client_file():
    """$CPI2_KAFKA_CLIENT_FILE, else the local stack's client file of principal operator if it
    exists, else '' (PLAINTEXT)."""
    env = os.environ.get("CPI2_KAFKA_CLIENT_FILE")
    if env is not None:
        return env
    f = STACK_DIR / "secrets" / "kafka-operator.properties"
    return str(f) if f.is_file() else ""


class ClientFileError(ValueError):
    pass


def read_client_file(path):
    """A Kafka client file (librdkafka properties: 'key=value' lines, '#' comments) as a dict.
    Refused, as the C agents refuse it, when group or others may read or write it: it holds a
    password that signs in as its principal."""
    try:
        st = os.stat(path)
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ClientFileError(f"Kafka client file {path}: {e.strerror}") from None
    if st.st_mode & 0o077:
        raise ClientFileError(f"Kafka client file {path}: mode {st.st_mode & 0o7777:04o} lets group or others read it,"
                              " and it holds a password: chmod 600 it")
    out = {}
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line or line.startswith("="):
            raise ClientFileError(f"Kafka client file {path}:{n}: expected key=value")
        k, v = line.split("=", 1)
        out[k] = v
    return out
