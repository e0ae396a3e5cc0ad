"""How wide the arena's intervals are for how many tables: ten noisy bidders of a known order
(``econarena/noisy``, noise 0.0 to 0.9) in auction_L, played in process (no evals, no network).
Prints, per tables_per_player, the mean width of the 95 % rating interval, the mean width of the
rank interval, Spearman's rank correlation with the planted order and the seconds taken; asserts nothing.

    python bench/arena.py [--per-player 5 10 20 40] [--seed 0]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from econarena_evals.games import cell as make_cell
from econarena_evals.games.builtin import NoisyBidder
from econarena_evals.score.rating import rate, tournament


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-player", type=int, nargs="+", default=[5, 10, 20, 40])
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    planted = [f"noise {i / 10:.1f}" for i in range(10)]
    players = {name: NoisyBidder(noise=i / 10) for i, name in enumerate(planted)}
    print("tables_per_player  tables  rating interval width  rank interval width  spearman  seconds")
    for per_player in opts.per_player:
        start = time.perf_counter()
        tables = tournament(players, make_cell({"game": "auction"}), per_player, opts.seed)
        rated = rate(tables, "bench", per_player)
        seconds = time.perf_counter() - start
        where = {r.player: i for i, r in enumerate(rated)}
        rho = float(np.corrcoef([where[p] for p in planted], range(len(planted)))[0, 1])
        width = float(np.mean([r.high - r.low for r in rated]))
        ranks = float(np.mean([r.rank_high - r.rank_low for r in rated]))
        print(f"{per_player:17d}  {len(tables):6d}  {width:21.3f}  {ranks:19.1f}  {rho:8.3f}  {seconds:7.1f}")


if __name__ == "__main__":
    main()
