#!/usr/bin/env bash
# Set up, then run the whole test suite (unit, property, fault and end-to-end tests; about 11
# minutes on a quiet 2-core machine with three workers: docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
export VENV
bash scripts/setup.sh
export PATH="$VENV/bin:$PATH"
# Three workers on two cores: most end-to-end tests wait on a subprocess or a local server, so the
# suite takes about half the time of one worker (docs/benchmarks.md). TEST_WORKERS=1 runs them one
# by one; any pytest option passes through "$@". A worker takes a whole test file at a time
# (--dist loadfile), so a module's shared logs are made once; the order is tests/conftest.py's.
exec "$VENV/bin/python" -m pytest -q -n "${TEST_WORKERS:-3}" --dist loadfile tests "$@"
