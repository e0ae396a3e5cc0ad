"""The arena's rating: a planted order recovered, copies rated alike, intervals seeded.

Each tournament is played in process (``score.rating.tournament``): the melee schedule seats built-in
players (``games.builtin``) at tables of seats (``score.table.Table``) over sessions drawn as the
samples files are; no evals, no network.
"""
from __future__ import annotations

import numpy as np
import pytest

from econarena_evals.games import cell as make_cell
from econarena_evals.games.builtin import NashPlayer, NoisyBidder, OverbiddingBidder
from econarena_evals.score.rating import head_to_head, rate, tables_of, tournament

AUCTION = {"game": "auction"}  # auction_L's args: values int(N(50, 10)), assets 100, fee 10


def melee(players, args=AUCTION, per_player=20, seed=0):
    return tournament(players, make_cell(args), per_player, seed)


def spearman(order, planted):
    where = {p: i for i, p in enumerate(order)}
    return float(np.corrcoef([where[p] for p in planted], range(len(planted)))[0, 1])


PLANTED = [f"noise {i / 10:.1f}" for i in range(10)]  # best first: truthful bidding is dominant


@pytest.mark.parametrize("seed", [0, 1])
def test_a_planted_order_of_ten_noisy_bidders_is_recovered_from_20_tables_each(seed):
    players = {name: NoisyBidder(noise=i / 10) for i, name in enumerate(PLANTED)}
    rated = rate(melee(players, seed=seed), "planted", seed)
    assert spearman([r.player for r in rated], PLANTED) >= 0.9
    by = {r.player: r for r in rated}
    best, worst = by[PLANTED[0]], by[PLANTED[-1]]
    assert best.low > worst.high  # the intervals do not overlap
    assert best.rank_high < worst.rank_low
    assert all(r.low <= r.rating <= r.high and r.rank_low <= r.rank <= r.rank_high for r in rated)
    assert {r.tables for r in rated} <= {20, 21} and all(r.runs == 10 * r.tables for r in rated)


def test_copies_of_one_player_rate_alike():
    players = {f"copy {i}": NoisyBidder(noise=0.3) for i in range(8)}
    rated = rate(melee(players, per_player=20, seed=3), "copies")
    assert max(r.low for r in rated) <= min(r.high for r in rated)  # every interval overlaps every other
    # no copy is told apart by rank: the rank intervals overlap pairwise, each holds a middle rank (4 or 5),
    # and each mean rank over the resamples lies within its own rank interval
    assert max(r.rank_low for r in rated) <= min(r.rank_high for r in rated)
    assert all(r.rank_low <= 5 and r.rank_high >= 4 for r in rated)
    assert all(r.rank_low <= r.mean_rank <= r.rank_high for r in rated)


def test_the_rating_rewards_payoff_not_winning():
    """In the second-price auction the overbidder wins more often than the truthful bidder and
    earns less: the rating puts the truthful bidder first."""
    players = {"truthful": NashPlayer(), "overbid": OverbiddingBidder(share=1.5), "noise 0.2": NoisyBidder(noise=0.2),
               "noise 0.4": NoisyBidder(noise=0.4), "noise 0.6": NoisyBidder(noise=0.6)}
    tables = melee(players, per_player=10, seed=2)
    # every bid here is valid, so only the winner's payoff is not its assets (100) alone
    wins = {p: sum(1 for runs in tables for run in runs for q, pay in run if q == p and pay != 100) for p in players}
    assert wins["overbid"] > wins["truthful"]
    rated = rate(tables, "payoff")
    assert rated[0].player == "truthful"
    won = head_to_head(tables)[("overbid", "truthful")]
    assert won[2] > won[1]  # the truthful bidder earned more in more of their shared runs


def test_intervals_are_seeded_by_what_they_rate():
    players = {name: NoisyBidder(noise=i / 5) for i, name in enumerate(PLANTED[:5])}
    tables = melee(players, per_player=4, seed=1)
    assert rate(tables, "a") == rate(tables, "a")
    assert rate(tables, "a") != rate(tables, "b")


def test_head_to_head_counts_the_runs_a_pair_shared():
    tables = [[[("a", 3.0), ("b", 1.0), ("c", 1.0)], [("a", 0.0), ("b", 2.0), ("c", 2.0)]], [[("a", 1.0), ("d", 0.0)]]]
    assert head_to_head(tables) == {("a", "b"): (2, 1, 1), ("a", "c"): (2, 1, 1), ("b", "c"): (2, 0, 0),
                                    ("a", "d"): (1, 1, 0)}


def test_tables_of_reads_run_events_by_session_and_run():
    events = [{"session": 1, "run": 1, "seats": [{"player": "a", "payoff": 1}, {"player": "b", "payoff": 0}]},
              {"session": 0, "run": 0, "seats": [{"player": "b", "payoff": 2}, {"player": "a", "payoff": 0}]},
              {"session": 1, "run": 0, "seats": [{"player": "a", "payoff": 0}, {"player": "b", "payoff": 5}]}]
    assert tables_of(events) == [[[("b", 2.0), ("a", 0.0)]], [[("a", 0.0), ("b", 5.0)], [("a", 1.0), ("b", 0.0)]]]
