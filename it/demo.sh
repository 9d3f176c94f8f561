#!/usr/bin/env bash
# make demo: bring the stack up and play the demo fleet through the whole pipeline
# (setup and build have run already as dependencies of the make target).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
"$ROOT/stack/up.sh"
exec "$ROOT/.venv/bin/python" -m cpi2.e2e.demo "$@"
