"""Do two commits write the same logs? Prints, per cell, whether they do; asserts nothing.

    python bench/same_logs.py [--base main] [--sessions 3]

Plays the same cells with built-in players (no network) at ``--base`` (checked out in a temporary
worktree) and at this checkout, with the same seed, and compares the logs line for line once what
differs on every run is taken out: the run id, the times, the event ids, the checkout's and the log's paths.
Lines are compared as a set (evals' threads record sessions in any order).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OAIEVAL = str(Path(sys.executable).parent / "oaieval")
# (players, eval): one cell of each game, history, an arena of two players
CELLS = [("econarena/human", "econarena.beauty_hist"), ("econarena/level2", "econarena.beauty_L"),
         ("econarena/nash,econarena/random", "econarena.auction_L"), ("econarena/human", "econarena.fpauction_L")]
VOLATILE = ("created_at", "run_id", "event_id", "created_by")


def normalised(path: Path, tree: Path) -> list[str]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.replace(str(Path(OAIEVAL).parent), "BIN")  # before the checkout: the venv may be in it
        d = json.loads(line.replace(str(tree), "TREE").replace(str(path.parent), "OUT"))
        for key in VOLATILE:
            d.pop(key, None)
            if isinstance(d.get("spec"), dict):
                d["spec"].pop(key, None)
        rows.append(json.dumps(d, sort_keys=True))
    return sorted(rows)


def play(tree: Path, out: Path, sessions: int) -> dict[str, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(tree), "EVALS_THREADS": "4", "ECONARENA_PROGRESS_S": "0"}
    logs = {}
    for fns, eval_name in CELLS:
        log = out / f"{eval_name}.{fns.replace('/', '_').replace(',', '+')}.jsonl"
        done = subprocess.run([OAIEVAL, fns, eval_name, "--registry_path", str(tree / "registry"), "--record_path",
                               str(log), "--max_samples", str(sessions), "--seed", "7"], env=env, cwd=tree,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{tree}: {fns} {eval_name}: exit {done.returncode}\n{done.stderr[-2000:]}")
        logs[f"{fns} {eval_name}"] = normalised(log, tree)
    return logs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main")
    parser.add_argument("--sessions", type=int, default=3)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(base), opts.base], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            (Path(tmp) / "a").mkdir()
            (Path(tmp) / "b").mkdir()
            before, after = play(base, Path(tmp) / "a", opts.sessions), play(ROOT, Path(tmp) / "b", opts.sessions)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, capture_output=True)
    for cell, rows in before.items():
        other = after[cell]
        same = rows == other
        print(f"{cell}: {len(rows)} lines, {'the same' if same else 'DIFFERENT'}"
              + ("" if same else f" ({len(set(rows) - set(other))} only at {opts.base}, "
                                 f"{len(set(other) - set(rows))} only here)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
