#!/usr/bin/env bash
# The inspect_ai front end (docs/inspect.md): its own venv (INSPECT_VENV, default .venv-inspect: this
# package with the [inspect] extra, no evals, on Python 3.10 or later; INSPECT_PYTHON picks the
# interpreter), the project's venv for oaieval, then tests_inspect/ with the real `inspect eval` and
# `oaieval` CLIs (scripts/front_end_tests.sh). Any pytest option passes through "$@".
exec bash "$(dirname "$0")/front_end_tests.sh" inspect "$@"
