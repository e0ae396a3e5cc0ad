"""Does the depth fit recover the τ of players of known depth? Played through the real oaieval, offline.

    python bench/depth_recovery.py [--resamples 2000] [--seed 0] [--workers 2]

Plays econarena/ch-0.5, ch-1.5 and ch-3 (the cognitive-hierarchy player, σ = 0.03) in self-play on
the 100 sessions of econarena.beauty_L.test.v0 through the real ``oaieval`` (no API key: built-in
players), and fits τ to each log's valid first-run choices / c_bar (500 choices, n = 5, p = 2/3)
with depth.fit_with_interval: the ML estimate and a 95 % percentile bootstrap interval over the
100 sessions. Target: every estimate within ±0.3 of the true τ, every interval covering it.

The same fit for the other reference players (econarena/human, level1..3, nash, random) on the same
cell, and, from bench/gama_depth.py, the GAMA-Bench language models (binned fit of their published
round-1 histograms, n = 10) next to people (Camerer, Ho & Chong's τ ≈ 1.5; τ matching Nagel's mean).
Exit status 1 if a ch target is missed.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from gama_depth import flag, gama_fits, gama_table  # noqa: E402

from econarena_evals.core import depth  # noqa: E402
from econarena_evals.core.references import GAMA_LABEL  # noqa: E402
from econarena_evals.log.evallog import read_log  # noqa: E402

EVAL = "econarena.beauty_L.test.v0"
N, P = 5, 2 / 3
TOLERANCE = 0.3
CH = {"econarena/ch-0.5": 0.5, "econarena/ch-1.5": 1.5, "econarena/ch-3": 3.0}
OTHERS = ("econarena/human", "econarena/level1", "econarena/level2", "econarena/level3", "econarena/nash",
          "econarena/random")


def play(player: str, tmp: str) -> list[list[float]]:
    """Self-play of ``player`` on the cell through oaieval; its valid first-run choices / c_bar, by session."""
    log = Path(tmp) / (player.replace("/", "_") + ".jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EVALS_", "ECONARENA_"))}
    env.update(PYTHONPATH=str(ROOT), EVALS_SHOW_EVAL_PROGRESS="")
    subprocess.run([str(Path(sys.executable).parent / "oaieval"), player, EVAL, "--registry_path",
                    str(ROOT / "registry"), "--record_path", str(log)], env=env, check=True, capture_output=True,
                   timeout=1800)
    parsed = read_log(log)
    if parsed.problems:
        raise RuntimeError(f"{log}: {parsed.problems}")
    by_session: dict[int, list[float]] = defaultdict(list)
    for r in parsed.runs:
        if r["run"] == 0:
            by_session[int(r["session"])].extend(s["action"] / r["c_bar"] for s in r["seats"] if s["valid"])
    return [by_session[s] for s in sorted(by_session)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="oaieval processes at once")
    args = ap.parse_args()
    players = list(CH) + list(OTHERS)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.workers) as pool:
        choices = dict(zip(players, pool.map(lambda p: play(p, tmp), players)))
    played = time.perf_counter() - start
    fits = {p: depth.fit_with_interval(choices[p], n=N, p=P, resamples=args.resamples, seed=args.seed)
            for p in players}
    fitted = time.perf_counter() - start - played

    print(f"Depth recovery on {EVAL} (self-play, first run, n = {N}, p = 2/3); ML CH fit, 95 % bootstrap "
          f"over sessions ({args.resamples} resamples)")
    print()
    print("| player | true τ | τ̂ | 95 % interval | σ̂ (share) | choices | sessions | within ±0.3 | covers τ | note |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ok = True
    for p in players:
        f = fits[p]
        true = CH.get(p)
        if true is None:
            within = covers = "-"
        else:
            w, c = abs(f["tau"] - true) <= TOLERANCE, f["ci_low"] <= true <= f["ci_high"]
            ok = ok and w and c
            within, covers = ("yes" if w else "NO"), ("yes" if c else "NO")
        print(f"| `{p}` | {'-' if true is None else f'{true:g}'} | {f['tau']:.2f} | "
              f"[{f['ci_low']:.2f}, {f['ci_high']:.2f}] | {f['sigma']:.3f} | {f['choices']} | {f['sessions']} | "
              f"{within} | {covers} | {flag(f)} |")
    print()
    print(f"Language models ({GAMA_LABEL}, p = 2/3, round 1; binned CH fit, n = 10) and people:")
    print()
    print("\n".join(gama_table(gama_fits(args.resamples, args.seed))))
    print()
    print(f"played {len(players)} x 100 sessions through oaieval in {played:.0f} s ({args.workers} at once); "
          f"{len(players)} fits in {fitted:.1f} s")
    print("targets (ch-0.5, ch-1.5, ch-3 within ±0.3, intervals covering τ):", "met" if ok else "MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
