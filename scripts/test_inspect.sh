#!/usr/bin/env bash
# The inspect_ai front end (docs/inspect.md): set up its own venv (INSPECT_VENV, default
# .venv-inspect: this package with the [inspect] extra, no evals, on Python 3.10 or later), set up
# the project's venv (scripts/setup.sh: the evals plugin, the other side of every comparison), then
# run tests_inspect/ with the real `inspect eval` and `oaieval` CLIs. Set-up is skipped when the venv
# already holds this checkout. INSPECT_PYTHON picks the interpreter (default python3); any pytest
# option passes through "$@".
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
INSPECT_VENV=${INSPECT_VENV:-.venv-inspect}
case "$INSPECT_VENV" in /*) ;; *) INSPECT_VENV="$PWD/$INSPECT_VENV" ;; esac
PYTHON=${INSPECT_PYTHON:-python3}

VENV=$VENV bash scripts/setup.sh

version=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) ||
  { echo "test_inspect.sh: INSPECT_PYTHON=$PYTHON is not a working Python" >&2; exit 1; }
case "$version" in
  3.1[0-9]) ;;
  *) echo "test_inspect.sh: inspect-ai needs Python 3.10 or later, $PYTHON is $version (INSPECT_PYTHON=...)" >&2; exit 1 ;;
esac
[ -x "$INSPECT_VENV/bin/python" ] || "$PYTHON" -m venv "$INSPECT_VENV"
stamp=$("$INSPECT_VENV/bin/python" - <<'PY'
import hashlib, pathlib, sys
h = hashlib.sha256(sys.version.encode())
for root in ("setup.py", "constraints-inspect.txt", "econarena_evals", "registry"):
    p = pathlib.Path(root)
    for f in sorted([p] if p.is_file() else p.rglob("*")):
        if f.is_file() and "__pycache__" not in f.parts:
            h.update(str(f).encode() + b"\0" + f.read_bytes())
print(h.hexdigest())
PY
)
if [ ! -f "$INSPECT_VENV/.econarena-setup" ] || [ "$(cat "$INSPECT_VENV/.econarena-setup")" != "$stamp" ]; then
  rm -f "$INSPECT_VENV/.econarena-setup"
  # the pins were taken on Python 3.11 (numpy's newest needs it); another Python resolves afresh
  pins=()
  [ "$version" = 3.11 ] && pins=(-c constraints-inspect.txt)
  echo "test_inspect.sh: installing .[inspect,test] into $INSPECT_VENV (the first time about 1.5 min, 390 MB)"
  rm -rf build ./*.egg-info
  # no -q: pip's line per package is the progress; the find-links notes of this machine's pip are dropped
  "$INSPECT_VENV/bin/python" -m pip --disable-pip-version-check install --progress-bar off "${pins[@]}" \
    --use-pep517 ".[inspect,test]" 2>&1 | { grep -vE "^WARNING: Location '" || true; }
  rm -rf build ./*.egg-info
  echo "$stamp" > "$INSPECT_VENV/.econarena-setup"
fi
# evals must not be in the front end's venv: the tests prove it runs without
if "$INSPECT_VENV/bin/python" -c "import evals" 2>/dev/null; then
  echo "test_inspect.sh: $INSPECT_VENV holds evals; the inspect front end must run without it" >&2
  exit 1
fi
ECONARENA_EVALS_VENV=$VENV exec "$INSPECT_VENV/bin/python" -m pytest -q -p no:cacheprovider \
  -n "${TEST_WORKERS:-2}" tests_inspect "$@"
