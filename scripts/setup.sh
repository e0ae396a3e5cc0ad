#!/usr/bin/env bash
# Set up (or refresh) the project's virtual environment: evals 3.0.1.post1 without its 4.3 GB of
# optional dependencies, the few packages it needs to run a custom eval, and this plugin.
# Safe to run again; it only reinstalls this project. VENV (default .venv) picks the folder.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)
# --no-deps: evals pins tensorflow, spacy, langchain, playwright, ... none of which a custom eval needs.
"${PIP[@]}" install -c constraints.txt --no-deps "evals==3.0.1.post1"
# setuptools reuses build/ between installs; a stale one can ship deleted modules.
rm -rf build ./*.egg-info
"${PIP[@]}" install -c constraints.txt ".[test,report]"
