#!/usr/bin/env bash
# Set up (or refresh) the project's virtual environment: evals 3.0.1.post1 without its 4.3 GB of
# optional dependencies, the few packages it needs to run a custom eval, and this plugin.
# Safe to run again: it does nothing when the venv already holds exactly this checkout (same
# sources, pins and Python), and otherwise only reinstalls this project. VENV (default .venv)
# picks the folder. Each step is said on stderr, with pip's lines, and a line at least every 10 s.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/speak.sh
VENV=${VENV:-.venv}
PYTHON_GIVEN=${PYTHON:+yes}
PYTHON=${PYTHON:-python3}

# The Pythons this project supports (setup.py's python_requires, the README and constraints.txt's
# pins say the same). Anything else stops here with one line, before venv or pip can fail at length.
MIN=3.9 MAX=3.13
USE="use Python $MIN to $MAX (PYTHON=/path/to/python3.11 bash scripts/setup.sh)"
refuse() { echo "setup.sh: $1" >&2; exit 1; }
py_version() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null; }
in_range() { # "3.9" -> supported?
  local minor=${1#3.}
  [ "${1%%.*}" = 3 ] && [ "$minor" -ge "${MIN#3.}" ] && [ "$minor" -le "${MAX#3.}" ]
}
if [ -x "$VENV/bin/python" ]; then
  have=$(py_version "$VENV/bin/python") || refuse "$VENV/bin/python does not run; remove $VENV to start again"
  if [ -n "$PYTHON_GIVEN" ]; then
    want=$(py_version "$PYTHON") || refuse "PYTHON=$PYTHON is not a working Python; $USE"
    [ "$want" = "$have" ] || refuse "$VENV has Python $have, not PYTHON's $want; remove $VENV, or set VENV=.venv-$want"
  fi
  in_range "$have" || refuse "$VENV has Python $have, which is not supported; remove $VENV and $USE"
else
  want=$(py_version "$PYTHON") || refuse "PYTHON=$PYTHON is not a working Python; $USE"
  in_range "$want" || refuse "Python $want ($PYTHON) is not supported; $USE"
  echo "setup.sh: making the venv $VENV (Python $want)" >&2
  "$PYTHON" -m venv "$VENV"
fi
# What the venv was last set up from: every file pip would install, the pins and the Python. Equal
# to the stamp of the last successful set-up: nothing to do (the tests and main.sh run set-up
# again and again; a reinstall costs half a minute).
stamp=$("$VENV/bin/python" - <<'PY'
import hashlib, pathlib, sys
h = hashlib.sha256(sys.version.encode())
for root in ("setup.py", "constraints.txt", "econarena_evals_hook.py", "econarena_evals", "registry"):
    p = pathlib.Path(root)
    for f in sorted([p] if p.is_file() else p.rglob("*")):
        if f.is_file() and "__pycache__" not in f.parts:
            h.update(str(f).encode() + b"\0" + f.read_bytes())
print(h.hexdigest())
PY
)
if [ -f "$VENV/.econarena-setup" ] && [ "$(cat "$VENV/.econarena-setup")" = "$stamp" ]; then
  exit 0
fi
rm -f "$VENV/.econarena-setup"
begun=$SECONDS
# pip's lines as they come, and a line of ours when pip goes quiet for 10 s (a wheel unpacking, a
# build). Left out: every optional evals dependency we leave out on purpose ("evals requires
# tensorflow, which is not installed"; those lines are expected), and the requirements already
# there. pip's exit status stands.
pip_install() {
  local what=$1
  shift
  "$VENV/bin/python" -m pip --disable-pip-version-check install -c constraints.txt "$@" 2>&1 |
    { grep --line-buffered -vE "^evals 3\.0\.1\.post1 requires |dependency resolver does not currently take into account|^WARNING: Location 'file:.*' is ignored|^Requirement already satisfied" || true; } |
    speak "installing $what"
}
# --no-deps: evals pins tensorflow, spacy, langchain, playwright, ... none of which a custom eval needs.
echo "setup.sh: installing evals 3.0.1.post1 into $VENV, without its optional dependencies (4.3 GB not needed)" >&2
pip_install "evals 3.0.1.post1" --no-deps "evals==3.0.1.post1"
# setuptools reuses build/ between installs; a stale one can ship deleted modules.
rm -rf build ./*.egg-info
# --use-pep517: the build every pip since 23.1 does anyway; the pip that 3.9's and 3.10's venvs come
# with would otherwise fall back to the deprecated `setup.py install` and say so at length.
echo "setup.sh: installing this checkout and what it needs (about a minute the first time)" >&2
pip_install "this checkout" --use-pep517 ".[test,report]"
rm -rf build ./*.egg-info
echo "$stamp" > "$VENV/.econarena-setup"
echo "setup.sh: $VENV is set up ($(elapsed $((SECONDS - begun))))" >&2
