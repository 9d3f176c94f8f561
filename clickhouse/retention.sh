#!/bin/sh
# Retention for servers without table TTL (ClickHouse 18.16): drops the day partitions older than
# each table's retention, read from the {{TTL(...)}} markers of the migrations (one source).
# Run it daily (cron, or the demo's loop). On a server with TTL it does nothing.
#   retention.sh [--url http://127.0.0.1:8123] [--database cpi2] [--today YYYY-MM-DD]
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-$(test -x "$root/.venv/bin/python" && echo "$root/.venv/bin/python" || echo python3)}
PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" exec "$py" -m cpi2.clickhouse.apply --retention "$@"
