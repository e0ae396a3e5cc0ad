import math

from hypothesis import given
from hypothesis import strategies as st

from econarena_evals.games import auction

PLAYERS = ["p"] * 5


def test_highest_bid_wins_and_pays_the_second():
    run = auction.score_run([40, 70, 55, 10, 0], values=[50, 60, 70, 40, 30], assets=100, fee=10, players=PLAYERS)
    assert run.winners == (2,) and run.price == 55
    assert [s.payoff for s in run.seats] == [100, 100 - 55 + 60, 100, 100, 100]


def test_ties_go_to_the_lowest_seat():
    run = auction.score_run([70, 70, 70, 10, 0], values=[50, 60, 70, 40, 30], assets=100, fee=10, players=PLAYERS)
    assert run.winners == (1,) and run.price == 70


def test_invalid_bid_pays_the_fee_and_takes_no_part():
    run = auction.score_run([None, 101, -1, math.inf, 20], values=[50] * 5, assets=100, fee=10, players=PLAYERS)
    assert run.winners == (5,) and run.price == 0  # the only valid bidder pays nothing
    assert [s.payoff for s in run.seats] == [90, 90, 90, 90, 100 - 0 + 50]


def test_nobody_valid_nobody_wins():
    run = auction.score_run([None] * 5, values=[50] * 5, assets=100, fee=10, players=PLAYERS)
    assert run.winners == () and run.price is None


def test_truthful_bidding_earns_the_equilibrium_payoff():
    values = [50, 60, 70, 70, 30]
    run = auction.score_run(values, values=values, assets=100, fee=10, players=PLAYERS)
    assert run.winners == (3,) and run.price == 70
    assert all(s.payoff == s.ne_payoff for s in run.seats)
    assert [s.ne_action for s in run.seats] == values


values_st = st.lists(st.integers(1, 100), min_size=1, max_size=6)


@given(values_st, st.data())
def test_at_most_one_winner_and_payoffs_follow_the_rules(values, data):
    n = len(values)
    bid = st.one_of(st.none(), st.floats(-10, 120), st.floats(allow_nan=True))
    bids = data.draw(st.lists(bid, min_size=n, max_size=n))
    run = auction.score_run(bids, values=values, assets=100, fee=10, players=["p"] * n)
    valid = [s for s in run.seats if s.valid]
    assert len(run.winners) == (1 if valid else 0)
    for s in run.seats:
        if not s.valid:
            assert s.payoff == 90
        elif run.won(s.seat):
            assert s.action == max(v.action for v in valid)
            assert s.payoff == 100 - run.price + values[s.seat - 1]
        else:
            assert s.payoff == 100


@given(values_st)
def test_truthful_play_is_the_equilibrium_for_any_values(values):
    run = auction.score_run(values, values=values, assets=100, fee=10, players=["p"] * len(values))
    assert all(s.payoff == s.ne_payoff for s in run.seats)
