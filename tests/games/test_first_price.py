"""The first-price auction: the equilibrium bid against theory, ties, and the reference bidders."""
from __future__ import annotations

import math

import numpy as np
import pytest

from econarena_evals.core.answers import parse_choice
from econarena_evals.fns.players import HumanPlayer, LevelKPlayer, NashPlayer, OverbiddingBidder, ShadingBidder
from econarena_evals.games import first_price as fp
from econarena_evals.games import read_prompt

DIST = (50.0, 10.0, 1.0, 100.0)  # fpauction_L


def uniform(lo, hi):
    return lambda x: min(1.0, max(0.0, (x - lo) / (hi - lo)))


@pytest.mark.parametrize("n", [2, 3, 5, 8])
@pytest.mark.parametrize("v", [0.5, 10, 37.25, 50, 99, 100])
def test_uniform_values_give_the_closed_form(n, v):
    assert math.isclose(fp.bne_bid(v, uniform(0, 100), 0, n), (n - 1) / n * v, rel_tol=1e-10)


def test_uniform_values_with_a_floor_shift_the_closed_form():
    for v in (20, 21, 60, 100):
        assert math.isclose(fp.bne_bid(v, uniform(20, 100), 20, 5), 20 + 0.8 * (v - 20), rel_tol=1e-10)


def test_the_bid_is_below_the_value_increasing_and_pinned_at_the_bottom():
    bids = [fp.ne_bid(float(v), *DIST, 5) for v in range(1, 101)]
    assert bids[0] == 1.0
    assert all(b <= v for b, v in zip(bids, range(1, 101)))
    assert all(a < b for a, b in zip(bids, bids[1:]))


def truncated_normal(rng, size, mean, sd, lo, hi):
    out = rng.normal(mean, sd, size * 2)
    out = out[(out >= lo) & (out <= hi)]
    return out[:size]


def test_no_profitable_deviation_against_equilibrium_bidders_monte_carlo():
    """Four others bid b(V), V from the truncated normal: no bid on a grid beats b(v) by more than noise."""
    rng = np.random.default_rng(1735)
    grid_v = np.linspace(1, 100, 397)
    grid_b = np.array([fp.ne_bid(float(v), *DIST, 5) for v in grid_v])
    others = truncated_normal(rng, 4 * 200_000, *DIST).reshape(-1, 4)
    top = np.sort(np.interp(others, grid_v, grid_b).max(axis=1))
    for v in (35.0, 45.0, 50.0, 55.0, 65.0, 80.0):
        b = fp.ne_bid(v, *DIST, 5)

        def surplus(x, v=v):
            return (v - x) * np.searchsorted(top, x, side="left") / len(top)

        xs = np.linspace(0.5 * v, v, 401)
        gains = [surplus(x) for x in xs]
        assert max(gains) <= surplus(b) + 0.005 + 0.002 * surplus(b), (v, b, max(gains), surplus(b))
        if surplus(b) > 0.1:  # where winning is likely enough to measure, the best grid bid is b(v)
            assert abs(xs[int(np.argmax(gains))] - b) < 0.5, (v, b)


def test_ties_lowest_seat_wins_and_every_seat_gets_its_ne_payoff():
    values = [60, 60, 40, 30, 60]
    bids = fp.ne_bids(values, DIST)
    run = fp.score_run(bids, values, DIST, assets=100, fee=10, players=["p"] * 5)
    assert run.winners == (1,) and run.price == bids[0]
    assert [s.payoff for s in run.seats] == [100 - bids[0] + 60, 100, 100, 100, 100]
    assert all(s.payoff == s.ne_payoff for s in run.seats)


def test_winner_pays_its_own_bid():
    run = fp.score_run([40, 70, 55, None, 101], [50, 80, 70, 40, 30], DIST, assets=100, fee=10, players=["p"] * 5)
    assert run.winners == (2,) and run.price == 70
    assert [s.payoff for s in run.seats] == [100, 100 - 70 + 80, 100, 90, 90]




def bid(player, value, seed=0):
    prompt = fp.prompt(seat=2, n=5, run=1, runs=10, value=value, assets=100, fee=10, dist=DIST)
    return parse_choice(player(prompt, seed=seed).get_completions()[0])


def test_reference_bidders(recorder):
    b60 = fp.ne_bid(60.0, *DIST, 5)
    assert bid(NashPlayer(), 60) == b60  # exact: the JSON number round-trips
    assert bid(LevelKPlayer(k=1), 60) == bid(LevelKPlayer(k=3), 60) == b60
    assert bid(ShadingBidder(), 60) == 45 and bid(OverbiddingBidder(), 90) == 100
    human = [bid(HumanPlayer(), 60, seed=s) for s in range(400)]
    assert all(b60 <= h <= 60 for h in human)
    gap = np.mean([(h - b60) / (60 - b60) for h in human])
    assert abs(gap - fp.HUMAN_GAP_MEAN) < 0.03


def test_prompt_reads_back_with_its_distribution():
    facts = read_prompt(fp.prompt(seat=3, n=5, run=2, runs=10, value=61, assets=100, fee=10, dist=DIST))
    assert (facts.game, facts.seat, facts.value, facts.upper, facts.values_from) == ("first_price", 3, 61, 100, DIST)
