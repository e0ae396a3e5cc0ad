#!/usr/bin/env bash
# CI on the oldest and newest supported Pythons (the default one runs the whole suite in .ci/run):
# for each, set up a venv of its own (.venv-ci-3.X, new in CI's fresh clone), run the quick test
# lane, and one real `oaieval` run read back by `econarena-summary --strict`. A Python this
# machine lacks is skipped with a line saying so. CI_PYTHONS="3.10 3.12" picks other versions.
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a PYTHONS <<< "${CI_PYTHONS:-3.9 3.13}"
# The quick lane: every test that starts no process and no server (`-m "not e2e"`, the README's
# inner loop); test_evals_imports checks that every evals module the plugin uses imports here.
QUICK=(-m "not e2e" tests)

version_of() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null; }
find_python() { # 3.9 -> an interpreter of that version: pyenv's newest patch release, else PATH
  local v=$1 p root
  root=$(pyenv root 2> /dev/null) || root=${PYENV_ROOT:-$HOME/.pyenv}
  while read -r p; do
    [ -x "$p" ] && [ "$(version_of "$p")" = "$v" ] && { echo "$p"; return; }
  done < <(ls -d "$root/versions/$v".*/bin/python 2> /dev/null | sort -rV)
  p=$(command -v "python$v" 2> /dev/null) && [ "$(version_of "$p")" = "$v" ] && echo "$p"
}

for v in "${PYTHONS[@]}"; do
  py=$(find_python "$v") || true
  if [ -z "$py" ]; then
    echo "ci_pythons.sh: no Python $v on this machine; skipped"
    continue
  fi
  venv=$PWD/.venv-ci-$v
  logs=$PWD/runs/ci-python-$v
  rm -rf "$logs"
  echo ">>> Python $v ($py): set-up, quick tests, one oaieval run"
  t0=$SECONDS
  PYTHON=$py VENV=$venv bash scripts/setup.sh
  t1=$SECONDS
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "${QUICK[@]}"
  t2=$SECONDS
  mkdir -p "$logs"
  if ! PATH="$venv/bin:$PATH" oaieval econarena/nash econarena.beauty_L --max_samples 2 \
    --record_path "$logs/beauty_L.jsonl" > "$logs/oaieval.out" 2>&1; then
    echo "ci_pythons.sh: oaieval failed on Python $v; its output:" >&2
    tail -n 20 "$logs/oaieval.out" >&2
    exit 1
  fi
  "$venv/bin/econarena-summary" "$logs" --strict
  echo "ci_pythons.sh: Python $v passed: set-up $((t1 - t0)) s, quick tests $((t2 - t1)) s, oaieval $((SECONDS - t2)) s"
done
