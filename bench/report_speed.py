"""How long ``econarena-report`` takes, and how much memory, on a realistic pile of logs.

    python bench/report_speed.py [--logs DIR] [--players 8]

Makes (once, into --logs, default /tmp/econarena-report-bench) the logs of 8 reference players in
every cell of ``econarena-full`` (dev split) with the real ``oaieval``, then runs the real
``econarena-report`` on all of them and prints the wall time, the peak memory (max RSS), the
number of logs, paired comparisons, floors and depth fits, and the size of ``report.html`` (its
replies embedded for the default number of sessions per log). Targets: under 30 s and 500 MB with
comparisons for all 28 pairs of players, and report.html under 25 MB. First it times one batch of
paired comparisons the size of a full report's (target: under 1 s).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = ("nash", "random", "level1", "level2", "level3", "human", "shade", "overbid")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=Path, default=Path("/tmp/econarena-report-bench"))
    parser.add_argument("--players", type=int, default=len(PLAYERS))
    opts = parser.parse_args()
    paired_batch()
    bindir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EVALS_", "ECONARENA_"))}
    env.update(PYTHONPATH=str(ROOT), EVALS_SHOW_EVAL_PROGRESS="")
    evals = subprocess.run([str(bindir / "python"), "-m", "econarena_evals.run.evalset", "econarena-full"], env=env,
                           check=True, capture_output=True, text=True).stdout.split()
    opts.logs.mkdir(parents=True, exist_ok=True)
    for player in PLAYERS[: opts.players]:
        for name in evals:
            log = opts.logs / f"{player}_{name}.jsonl"
            if not log.exists():
                subprocess.run([str(bindir / "oaieval"), f"econarena/{player}", name, "--record_path", str(log)],
                               env=env, check=True, capture_output=True)
    logs = sorted(opts.logs.glob("*.jsonl"))
    size = sum(p.stat().st_size for p in logs) / 1e6
    out = opts.logs / "report"
    start = time.perf_counter()
    # os.wait4: the time and memory of the report alone, not of the oaieval runs that made the logs
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([str(bindir / "econarena-report"), str(opts.logs), "--out", str(out)], env=env,
                                stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if status != 0:
            err.seek(0)
            sys.exit(f"econarena-report failed: {err.read().decode()[-2000:]}")
    rss_mb = usage.ru_maxrss / 1024
    cpu = usage.ru_utime + usage.ru_stime
    data = json.loads((out / "report.json").read_text())
    pairs = {(c["a"], c["b"]) for c in data["comparisons"]}
    fits = sum(len(cols) for cols in data["depth"].values())
    print(f"logs: {len(logs)} ({size:.0f} MB), players: {len(data['overall'])}, columns: {len(data['floors'])}")
    print(f"comparisons: {len(data['comparisons'])} rows over {len(pairs)} pairs; floors: {len(data['floors'])} "
          f"columns; depth fits: {fits}")
    page = out / "report.html"
    print(f"econarena-report: {wall:.1f} s wall, {cpu:.1f} s CPU, {rss_mb:.0f} MB max RSS (targets: 30 s, 500 MB)")
    print(f"report.html: {page.stat().st_size / 1e6:.1f} MB (target: under 25 MB)")


def paired_batch() -> None:
    """The paired comparisons of a full report in one batch: 28 pairs x 6 metrics x 13 columns,
    100 sessions each, 2,000 resamples (tests/score/test_paired.py checks the same batch's figures)."""
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from econarena_evals.score.paired import paired_comparisons

    d = np.random.default_rng(0).normal(0, 0.1, size=(28 * 6 * 13, 100))
    start = time.perf_counter()
    paired_comparisons(d, resamples=2000, seed=0)
    print(f"paired comparisons, one batch of {d.shape[0]:,} rows x {d.shape[1]} sessions: "
          f"{time.perf_counter() - start:.2f} s (target: under 1 s)")


if __name__ == "__main__":
    main()
