#!/usr/bin/env bash
# Set up, then run the whole test suite (unit, property, fault and end-to-end tests; about six
# minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
export VENV
bash scripts/setup.sh
export PATH="$VENV/bin:$PATH"
exec "$VENV/bin/python" -m pytest -q tests "$@"
