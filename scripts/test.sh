#!/usr/bin/env bash
# Set up, then run the whole test suite (unit, property and end-to-end tests; about a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
VENV=${VENV:-.venv}
export PATH="$PWD/$VENV/bin:$PATH"
exec "$VENV/bin/python" -m pytest -q tests "$@"
