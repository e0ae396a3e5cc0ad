#!/usr/bin/env bash
# A front end's tests in a venv of its own: `bash scripts/front_end_tests.sh inspect|verifiers [pytest
# options]` (scripts/test_inspect.sh and scripts/test_verifiers.sh run it). It sets up the front end's
# venv (this package with its extra and the test extras, no evals; INSPECT_VENV / VERIFIERS_VENV,
# default .venv-inspect / .venv-verifiers; INSPECT_PYTHON / VERIFIERS_PYTHON pick the interpreter,
# default python3), sets up the project's venv (scripts/setup.sh: the evals plugin, the other side of
# every comparison), then runs the front end's tests (tests_inspect/, tests_verifiers/) with the real
# CLIs. Set-up is skipped when the venv already holds this checkout; pytest options pass through.
set -euo pipefail
cd "$(dirname "$0")/.."
FRONT=${1:?"usage: front_end_tests.sh inspect|verifiers [pytest options]"}
shift
case "$FRONT" in
  # venv variable, python variable, pythons that work, what the first install costs
  inspect) venv_var=INSPECT_VENV; py_var=INSPECT_PYTHON; pythons="3.1[0-9]"; needs="Python 3.10 or later"
           cost="about 1.5 min, 390 MB" ;;
  verifiers) venv_var=VERIFIERS_VENV; py_var=VERIFIERS_PYTHON; pythons="3.1[1-4]"; needs="Python 3.11 to 3.14"
             cost="1 to 10 min, 660 MB" ;;
  *) echo "front_end_tests.sh: no front end $FRONT (inspect, verifiers)" >&2; exit 2 ;;
esac
me="test_$FRONT.sh"
VENV=${VENV:-.venv}
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
FRONT_VENV=${!venv_var:-.venv-$FRONT}
case "$FRONT_VENV" in /*) ;; *) FRONT_VENV="$PWD/$FRONT_VENV" ;; esac
PYTHON=${!py_var:-python3}

VENV=$VENV bash scripts/setup.sh

version=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) ||
  { echo "$me: $py_var=$PYTHON is not a working Python" >&2; exit 1; }
# shellcheck disable=SC2254  # $pythons is a pattern
case "$version" in
  $pythons) ;;
  *) echo "$me: $FRONT needs $needs, $PYTHON is $version ($py_var=...)" >&2; exit 1 ;;
esac
[ -x "$FRONT_VENV/bin/python" ] || "$PYTHON" -m venv "$FRONT_VENV"
stamp=$(FRONT="$FRONT" "$FRONT_VENV/bin/python" - <<'PY'
import hashlib, os, pathlib, sys
h = hashlib.sha256(sys.version.encode())
for root in ("setup.py", f"constraints-{os.environ['FRONT']}.txt", "econarena_evals", "registry"):
    p = pathlib.Path(root)
    for f in sorted([p] if p.is_file() else p.rglob("*")):
        if f.is_file() and "__pycache__" not in f.parts:
            h.update(str(f).encode() + b"\0" + f.read_bytes())
print(h.hexdigest())
PY
)
if [ ! -f "$FRONT_VENV/.econarena-setup" ] || [ "$(cat "$FRONT_VENV/.econarena-setup")" != "$stamp" ]; then
  rm -f "$FRONT_VENV/.econarena-setup"
  # the pins were taken on Python 3.11 (numpy's newest needs it); another Python resolves afresh
  pins=()
  [ "$version" = 3.11 ] && pins=(-c "constraints-$FRONT.txt")
  echo "$me: installing .[$FRONT,test] into $FRONT_VENV (the first time $cost)"
  rm -rf build ./*.egg-info
  # no -q: pip's line per package is the progress; the find-links notes of this machine's pip are dropped
  "$FRONT_VENV/bin/python" -m pip --disable-pip-version-check install --progress-bar off "${pins[@]}" \
    --use-pep517 ".[$FRONT,test]" 2>&1 | { grep -vE "^WARNING: Location '" || true; }
  rm -rf build ./*.egg-info
  echo "$stamp" > "$FRONT_VENV/.econarena-setup"
fi
# evals must not be in the front end's venv: the tests prove it runs without
if "$FRONT_VENV/bin/python" -c "import evals" 2>/dev/null; then
  echo "$me: $FRONT_VENV holds evals; the $FRONT front end must run without it" >&2
  exit 1
fi
ECONARENA_EVALS_VENV=$VENV exec "$FRONT_VENV/bin/python" -m pytest -q -p no:cacheprovider \
  -n "${TEST_WORKERS:-2}" "tests_$FRONT" "$@"
