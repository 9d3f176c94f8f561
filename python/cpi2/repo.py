"""Where the repository and the local stack are, and the readers of their files: stack.env (the
stack's ports, the one reader of it in Python) and Kafka client files. Standard library only."""

import os
import pathlib

ROOT = pathlib.Path(os.environ.get("CPI2_ROOT") or pathlib.Path(__file__).resolve().parents[2])
CLICKHOUSE_DIR = ROOT / "clickhouse"
SCHEMAS_DIR = ROOT / "schemas"
# The stack's ports: stack/stack.env, or the file STACK_ENV names (as for every make target).
DEFAULT_STACK_ENV = ROOT / "stack" / "stack.env"
STACK_ENV = pathlib.Path(os.environ.get("STACK_ENV") or DEFAULT_STACK_ENV)
STACK_DIR = pathlib.Path(os.environ.get("STACK_DIR") or ROOT / ".stack")


def read_env(path=None, missing_ok=True):
    """The KEY=value lines of a stack.env file (default: $STACK_ENV, else stack/stack.env) as a
    dict; '#' comments and blank lines skipped, keys and values stripped. {} when the file is
    absent and missing_ok, else OSError."""
    path = pathlib.Path(path or STACK_ENV)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if missing_ok:
            return {}
        raise
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def stack_env():
    """The local stack's stack.env ($STACK_ENV or stack/stack.env), {} when absent."""
    return read_env()


def default_clickhouse_url():
    env = stack_env()
    return os.environ.get("CPI2_CLICKHOUSE_URL") or "http://%s:%s" % (
        env.get("STACK_HOST", "127.0.0.1"),
        env.get("CLICKHOUSE_HTTP_PORT", "8123"),
    )


def kafka_bootstrap(env):
    """Every broker of a stack.env's stack, comma-separated: broker i listens on KAFKA_PORT+2i,
    KAFKA_BROKERS of them (1 when absent; stack/lib.sh's kafka_bootstrap), so a client given the
    list works on while any one of them is down."""
    host = env.get("STACK_HOST", "127.0.0.1")
    port = int(env.get("KAFKA_PORT", "9092"))
    return ",".join("%s:%d" % (host, port + 2 * i) for i in range(int(env.get("KAFKA_BROKERS", "1"))))


def clickhouse_urls(env):
    """The HTTP URL of every ClickHouse node of a stack.env's stack, comma-separated: node i at
    CLICKHOUSE_HTTP_PORT+i, CLICKHOUSE_SHARDS x CLICKHOUSE_REPLICAS of them (1 when absent;
    stack/clickhouse-cluster.sh). The loader's --clickhouse.url takes the list and goes on to the
    next node when one is down."""
    host = env.get("STACK_HOST", "127.0.0.1")
    port = int(env.get("CLICKHOUSE_HTTP_PORT", "8123"))
    nodes = int(env.get("CLICKHOUSE_SHARDS", "1")) * int(env.get("CLICKHOUSE_REPLICAS", "1"))
    return ",".join("http://%s:%d" % (host, port + i) for i in range(nodes))


def default_kafka_bootstrap():
    return os.environ.get("CPI2_KAFKA_BOOTSTRAP") or kafka_bootstrap(stack_env())


def kafka_client_file(principal):
    """The local stack's client file of a Kafka principal (librdkafka properties: SASL_SSL, user,
    password, CA) as a str, or None when the stack made no secrets (a stack from before
    authentication)."""
    f = STACK_DIR / "secrets" / f"kafka-{principal}.properties"
    return str(f) if f.is_file() else None


def default_kafka_client_file():
    """$CPI2_KAFKA_CLIENT_FILE, else the local stack's client file of principal operator if it
    exists, else '' (PLAINTEXT)."""
    env = os.environ.get("CPI2_KAFKA_CLIENT_FILE")
    if env is not None:
        return env
    return kafka_client_file("operator") or ""


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
        raise ClientFileError(
            f"Kafka client file {path}: mode {st.st_mode & 0o7777:04o} lets group or others read it,"
            " and it holds a password: chmod 600 it"
        )
    out = {}
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line or line.startswith("="):
            raise ClientFileError(f"Kafka client file {path}:{n}: expected key=value")
        k, v = line.split("=", 1)
        if not k.startswith("cpi2."):  # the agents' signing key (cpi2.hostauth), not librdkafka's
            out[k] = v
    return out
