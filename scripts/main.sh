#!/usr/bin/env bash
# The main job: set up, run the `econarena` eval set (five cells, dev split) with both built-in
# players, offline (no API key, no network), print their results side by side, and write the
# report (leaderboard, convergence and first-run plots) to ./econarena-report/.
#
# Every log goes to a run folder of its own (RUN_DIR, default runs/main-<time>), and the summary
# and report read exactly those logs, whatever else writes to /tmp/evallogs meanwhile. Any eval
# that fails, or any errored session, stops the job with a non-zero status and the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
export VENV
bash scripts/setup.sh
export PATH="$VENV/bin:$PATH"
RUN_DIR=${RUN_DIR:-runs/main-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$RUN_DIR"
mapfile -t evals < <("$VENV/bin/python" -m econarena_evals.run.evalset econarena)
for player in econarena/nash econarena/random; do
  for eval in "${evals[@]}"; do
    log="$RUN_DIR/${player//\//_}/$eval.jsonl"
    mkdir -p "$(dirname "$log")"
    echo ">>> oaieval $player $eval --record_path $log"
    if ! oaieval "$player" "$eval" --record_path "$log" > "$log.out" 2>&1; then
      echo "main.sh: oaieval $player $eval failed; its output:" >&2
      tail -n 20 "$log.out" >&2
      exit 1
    fi
  done
done
echo
econarena-summary "$RUN_DIR" --strict
echo
REPORT_DIR=${REPORT_DIR:-econarena-report}
econarena-report "$RUN_DIR" --out "$REPORT_DIR"
echo "logs in $RUN_DIR; open $REPORT_DIR/report.html (or report.md) for the leaderboard, plots and sessions"
