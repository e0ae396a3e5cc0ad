#!/usr/bin/env bash
# The verifiers front end (docs/verifiers.md): its own venv (VERIFIERS_VENV, default .venv-verifiers:
# this package with the [verifiers] extra, no evals, on Python 3.11 or later; VERIFIERS_PYTHON picks
# the interpreter), the project's venv for oaieval, then tests_verifiers/ with the real `vf-eval`,
# `econarena-serve` and `oaieval` CLIs (scripts/front_end_tests.sh). Any pytest option passes through "$@".
exec bash "$(dirname "$0")/front_end_tests.sh" verifiers "$@"
