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
