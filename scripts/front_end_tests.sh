#!/usr/bin/env bash
# A front end's tests in a venv of its own: `bash scripts/front_end_tests.sh inspect|verifiers [pytest
# options]` (scripts/test_inspect.sh and scripts/test_verifiers.sh run it). It sets up the front end's
# venv (this package with its extra and the test extras, no evals; INSPECT_VENV / VERIFIERS_VENV,
# default .venv-inspect / .venv-verifiers; INSPECT_PYTHON / VERIFIERS_PYTHON pick the interpreter,
# default python3), sets up the project's venv (scripts/setup.sh: the evals plugin, the other side of
# every comparison), then runs the front end's tests (tests_inspect/, tests_verifiers/) with the real
# CLIs. The verifiers tests also need the inspect venv (one model under all three front ends, reported
# together): it is set up as test_inspect.sh sets it up. Set-up is skipped when a venv already holds
# this checkout; pytest options pass through.
set -euo pipefail
cd "$(dirname "$0")/.."
FRONT=${1:?"usage: front_end_tests.sh inspect|verifiers [pytest options]"}
shift
case "$FRONT" in inspect|verifiers) ;;
  *) echo "front_end_tests.sh: no front end $FRONT (inspect, verifiers)" >&2; exit 2 ;;
esac
me="test_$FRONT.sh"
VENV=${VENV:-.venv}
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac

VENV=$VENV bash scripts/setup.sh

# front_venv FRONT: set up FRONT's venv (if it does not hold this checkout yet) and print its path
front_venv() {
  local front=$1 venv_var py_var pythons needs cost venv python version stamp
  case "$front" in
    # venv variable, python variable, pythons that work, what the first install costs
    inspect) venv_var=INSPECT_VENV; py_var=INSPECT_PYTHON; pythons="3.1[0-9]"; needs="Python 3.10 or later"
             cost="about 1.5 min, 390 MB" ;;
    verifiers) venv_var=VERIFIERS_VENV; py_var=VERIFIERS_PYTHON; pythons="3.1[1-4]"; needs="Python 3.11 to 3.14"
               cost="1 to 10 min, 660 MB" ;;
  esac
  venv=${!venv_var:-.venv-$front}
  case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
  python=${!py_var:-python3}
  version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) ||
    { echo "$me: $py_var=$python is not a working Python" >&2; return 1; }
  # shellcheck disable=SC2254  # $pythons is a pattern
  case "$version" in
    $pythons) ;;
    *) echo "$me: $front needs $needs, $python is $version ($py_var=...)" >&2; return 1 ;;
  esac
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv" >&2
  stamp=$(FRONT="$front" "$venv/bin/python" - <<'PY'
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
  if [ ! -f "$venv/.econarena-setup" ] || [ "$(cat "$venv/.econarena-setup")" != "$stamp" ]; then
    rm -f "$venv/.econarena-setup"
    # the pins were taken on Python 3.11 (numpy's newest needs it); another Python resolves afresh
    local pins=()
    [ "$version" = 3.11 ] && pins=(-c "constraints-$front.txt")
    echo "$me: installing .[$front,test] into $venv (the first time $cost)" >&2
    rm -rf build ./*.egg-info
    # no -q: pip's line per package is the progress; the find-links notes of this machine's pip are dropped
    "$venv/bin/python" -m pip --disable-pip-version-check install --progress-bar off "${pins[@]}" \
      --use-pep517 ".[$front,test]" 2>&1 | { grep -vE "^WARNING: Location '" || true; } >&2
    rm -rf build ./*.egg-info
    echo "$stamp" > "$venv/.econarena-setup"
  fi
  # evals must not be in a front end's venv: the tests prove it runs without
  if "$venv/bin/python" -c "import evals" 2>/dev/null; then
    echo "$me: $venv holds evals; the $front front end must run without it" >&2
    return 1
  fi
  echo "$venv"
}

FRONT_VENV=$(front_venv "$FRONT")
# the verifiers tests also play one model under all three front ends and report them together: the
# inspect CLI from its venv (CI has set it up by then: scripts/test_inspect.sh runs first)
others=()
if [ "$FRONT" = verifiers ]; then
  inspect_venv=$(front_venv inspect)
  others=("ECONARENA_INSPECT_VENV=$inspect_venv")
fi
exec env ECONARENA_EVALS_VENV="$VENV" "${others[@]}" "$FRONT_VENV/bin/python" -m pytest -q -p no:cacheprovider \
  --file-progress -n "${TEST_WORKERS:-2}" "tests_$FRONT" "$@"
