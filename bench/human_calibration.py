"""The human-calibrated player against Nagel (1995), played through the real oaieval, offline.

    python bench/human_calibration.py

First run: the choices of econarena/human in self-play on the 100 sessions of
econarena.beauty_L.test.v0 (500 choices), as a fraction of c_bar, against Nagel's first period
(p = 2/3: mean 36.73, median 33, of 100). With history: the mean choice by run in
econarena.beauty_hist.test.v0 against Nagel's four-period session (39.7, 28.6, 20.2, 16.7).
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from econarena_evals.log.evallog import read_log  # noqa: E402

NAGEL_MEAN, NAGEL_MEDIAN = 36.73, 33.0
NAGEL_PERIODS = (39.7, 28.6, 20.2, 16.7)


def play(cell: str, tmp: str):
    log = Path(tmp) / f"{cell}.jsonl"
    subprocess.run([str(Path(sys.executable).parent / "oaieval"), "econarena/human", f"econarena.{cell}.test.v0",
                    "--registry_path", str(ROOT / "registry"), "--record_path", str(log)],
                   check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return read_log(log)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        first = play("beauty_L", tmp)
        hist = play("beauty_hist", tmp)
    shares = [100 * s["action"] / r["c_bar"] for r in first.runs if r["run"] == 0 for s in r["seats"]]
    sessions = len({r["session"] for r in first.runs})
    mean, median = statistics.mean(shares), statistics.median(shares)
    print(f"first run, {sessions} sessions, {len(shares)} choices, % of c_bar:")
    print(f"  mean   {mean:6.2f}   Nagel {NAGEL_MEAN}  (off by {mean - NAGEL_MEAN:+.2f} points; bound +-2)")
    print(f"  median {median:6.2f}   Nagel {NAGEL_MEDIAN}")
    by_run = defaultdict(list)
    for r in hist.runs:
        by_run[r["run"]].extend(100 * s["action"] / r["c_bar"] for s in r["seats"])
    print("with history (beauty_hist, mean % of c_bar by run) vs Nagel's four periods:")
    for run in range(len(NAGEL_PERIODS)):
        print(f"  run {run + 1}: {statistics.mean(by_run[run]):6.2f}   Nagel {NAGEL_PERIODS[run]}")
    rest = ", ".join(f"{statistics.mean(by_run[r]):.1f}" for r in sorted(by_run) if r >= len(NAGEL_PERIODS))
    print(f"  runs 5-{len(by_run)}: {rest}")
    return 0 if abs(mean - NAGEL_MEAN) <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
