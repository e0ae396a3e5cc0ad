#!/usr/bin/env bash
# The verifiers front end (docs/verifiers.md): set up its own venv (VERIFIERS_VENV, default
# .venv-verifiers: this package with the [verifiers] extra, no evals, on Python 3.11 or later), set
# up the project's venv (scripts/setup.sh: the evals plugin, the other side of every comparison), then
# run tests_verifiers/ with the real `vf-eval` and `oaieval` CLIs. Set-up is skipped when the venv
# already holds this checkout. VERIFIERS_PYTHON picks the interpreter (default python3); any pytest
# option passes through "$@".
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
VERIFIERS_VENV=${VERIFIERS_VENV:-.venv-verifiers}
case "$VERIFIERS_VENV" in /*) ;; *) VERIFIERS_VENV="$PWD/$VERIFIERS_VENV" ;; esac
PYTHON=${VERIFIERS_PYTHON:-python3}

VENV=$VENV bash scripts/setup.sh

version=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) ||
  { echo "test_verifiers.sh: VERIFIERS_PYTHON=$PYTHON is not a working Python" >&2; exit 1; }
case "$version" in
  3.1[1-4]) ;;
  *) echo "test_verifiers.sh: verifiers needs Python 3.11 to 3.14, $PYTHON is $version (VERIFIERS_PYTHON=...)" >&2; exit 1 ;;
esac
[ -x "$VERIFIERS_VENV/bin/python" ] || "$PYTHON" -m venv "$VERIFIERS_VENV"
stamp=$("$VERIFIERS_VENV/bin/python" - <<'PY'
import hashlib, pathlib, sys
h = hashlib.sha256(sys.version.encode())
for root in ("setup.py", "constraints-verifiers.txt", "econarena_evals", "registry"):
    p = pathlib.Path(root)
    for f in sorted([p] if p.is_file() else p.rglob("*")):
        if f.is_file() and "__pycache__" not in f.parts:
            h.update(str(f).encode() + b"\0" + f.read_bytes())
print(h.hexdigest())
PY
)
if [ ! -f "$VERIFIERS_VENV/.econarena-setup" ] || [ "$(cat "$VERIFIERS_VENV/.econarena-setup")" != "$stamp" ]; then
  rm -f "$VERIFIERS_VENV/.econarena-setup"
  # the pins were taken on Python 3.11; another Python resolves afresh
  pins=()
  [ "$version" = 3.11 ] && pins=(-c constraints-verifiers.txt)
  echo "test_verifiers.sh: installing .[verifiers,test] into $VERIFIERS_VENV (the first time 1 to 10 min, 600 MB)"
  rm -rf build ./*.egg-info
  # no -q: pip's line per package is the progress; the find-links notes of this machine's pip are dropped
  "$VERIFIERS_VENV/bin/python" -m pip --disable-pip-version-check install --progress-bar off "${pins[@]}" \
    --use-pep517 ".[verifiers,test]" 2>&1 | { grep -vE "^WARNING: Location '" || true; }
  rm -rf build ./*.egg-info
  echo "$stamp" > "$VERIFIERS_VENV/.econarena-setup"
fi
# evals must not be in the front end's venv: the tests prove it runs without
if "$VERIFIERS_VENV/bin/python" -c "import evals" 2>/dev/null; then
  echo "test_verifiers.sh: $VERIFIERS_VENV holds evals; the verifiers front end must run without it" >&2
  exit 1
fi
ECONARENA_EVALS_VENV=$VENV exec "$VERIFIERS_VENV/bin/python" -m pytest -q -p no:cacheprovider \
  -n "${TEST_WORKERS:-2}" tests_verifiers "$@"
