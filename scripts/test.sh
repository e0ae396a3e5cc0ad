#!/usr/bin/env bash
# Set up, then run the whole test suite (unit, property, fault and end-to-end tests; about 11
# minutes on a quiet 2-core machine with three workers: docs/benchmarks.md), in three steps that
# each say what they do: the venv (scripts/setup.sh), the real model's server for
# tests/test_local_model.py (scripts/local_model.sh setup: llama.cpp built from source the first
# time, 5 minutes on 2 free cores and about 20 on a busy one, with its build's progress lines;
# nothing once cached in ~/.cache/econarena-evals), then pytest, with a line per finished test file and one after any
# 10 s without one (tests/file_progress.py).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
export VENV
bash scripts/setup.sh
export PATH="$VENV/bin:$PATH"
# the build before the tests, not inside one: inside, pytest showed only its dots for 20 minutes
bash scripts/local_model.sh setup
# Three workers on two cores: most end-to-end tests wait on a subprocess or a local server, so the
# suite takes about half the time of one worker (docs/benchmarks.md). TEST_WORKERS=1 runs them one
# by one; any pytest option passes through "$@". A worker takes a whole test file at a time
# (--dist loadfile), so a module's shared logs are made once; the order is tests/conftest.py's.
exec "$VENV/bin/python" -m pytest -q --file-progress -n "${TEST_WORKERS:-3}" --dist loadfile tests "$@"
