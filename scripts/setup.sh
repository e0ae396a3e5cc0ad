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
# pip lists every optional evals dependency we leave out on purpose ("evals requires tensorflow,
# which is not installed"); those lines are expected, so they are filtered. pip's exit status stands.
pip_install() {
  "$VENV/bin/python" -m pip --disable-pip-version-check -q install -c constraints.txt "$@" 2>&1 |
    { grep -vE "^evals 3\.0\.1\.post1 requires |dependency resolver does not currently take into account|^WARNING: Location 'file:.*' is ignored" || true; }
}
# --no-deps: evals pins tensorflow, spacy, langchain, playwright, ... none of which a custom eval needs.
pip_install --no-deps "evals==3.0.1.post1"
# setuptools reuses build/ between installs; a stale one can ship deleted modules.
rm -rf build ./*.egg-info
pip_install ".[test,report]"
rm -rf build ./*.egg-info
