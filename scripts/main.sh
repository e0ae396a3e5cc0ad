#!/usr/bin/env bash
# The main job: set up, run the `econarena` eval set (five cells, dev split) with both built-in
# players, offline (no API key, no network), print their results side by side, and write the
# report (leaderboard, convergence and first-run plots) to ./econarena-report/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
VENV=${VENV:-.venv}
export PATH="$PWD/$VENV/bin:$PATH"
start=$(date +%s)
marker=$(mktemp)
for player in econarena/nash econarena/random; do
  echo ">>> oaievalset $player econarena"
  # evals writes one log per cell under /tmp/evallogs; --no-resume reruns every cell.
  oaievalset "$player" econarena --no-resume 2>&1 | grep -E "Running command|All done" || true
done
echo
econarena-summary /tmp/evallogs --since "$start"
echo
mapfile -t logs < <(find /tmp/evallogs -name '*.jsonl' -newer "$marker")
econarena-report "${logs[@]}" --out econarena-report
rm -f "$marker"
echo "open econarena-report/report.md for the leaderboard and plots"
