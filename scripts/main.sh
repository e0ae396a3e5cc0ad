#!/usr/bin/env bash
# The main job: set up, run the `econarena` eval set (five cells, dev split) with both built-in
# players, offline (no API key, no network), then print their results side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
VENV=${VENV:-.venv}
export PATH="$PWD/$VENV/bin:$PATH"
start=$(date +%s)
for player in econarena/nash econarena/random; do
  echo ">>> oaievalset $player econarena"
  # evals writes one log per cell under /tmp/evallogs; --no-resume reruns every cell.
  oaievalset "$player" econarena --no-resume 2>&1 | grep -E "Running command|All done" || true
done
echo
econarena-summary /tmp/evallogs --since "$start"
