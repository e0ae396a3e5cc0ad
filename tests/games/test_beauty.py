import math

from hypothesis import given
from hypothesis import strategies as st

from econarena_evals.games import beauty

PLAYERS = ["p"] * 5
numbers = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.floats(0, 1e4))


def test_closest_to_two_thirds_of_the_mean_wins():
    run = beauty.score_run([10, 20, 30, 40, 50], c_bar=100, prize=100, players=PLAYERS)
    assert run.target == 20  # 2/3 * 30
    assert run.winners == (2,)
    assert [s.payoff for s in run.seats] == [0, 100, 0, 0, 0]


def test_tied_winners_split_the_prize():
    run = beauty.score_run([0, 0, 60, 60, 30], c_bar=100, prize=100, players=PLAYERS)
    # mean 30, target 20: 30 is 10 away, 0 is 20 away
    assert run.winners == (5,)
    run = beauty.score_run([10, 30, 90, 90, 80], c_bar=100, prize=100, players=PLAYERS)
    # mean 60, target 40: 30 is 10 away... and nobody at 50; 30 wins alone
    assert run.winners == (2,)
    run = beauty.score_run([10, 10, 40, 40, 50], c_bar=100, prize=90, players=PLAYERS)
    # mean 30, target 20: both 10s are 10 away, 40s are 20 away
    assert run.winners == (1, 2)
    assert [s.payoff for s in run.seats] == [45, 45, 0, 0, 0]


def test_float_noise_does_not_break_a_real_tie():
    # 0.1 + 0.2 style sums: the two seats are equally far from the target in exact arithmetic
    run = beauty.score_run([0.1, 0.3, 0.3, 0.4, 0.4], c_bar=1, prize=100, players=PLAYERS)
    t = run.target  # 0.2 in exact arithmetic; 0.1 and 0.3 are equally close
    assert abs(0.1 - t) != abs(0.3 - t)  # ...but not in floating point
    assert run.winners == (1, 2, 3)
    run = beauty.score_run([1 / 3, 1 / 3 + 1e-13, 1, 1, 1], c_bar=1, prize=100, players=PLAYERS)
    assert run.winners == (1, 2)


def test_rule_breaks_do_not_count_towards_the_mean_and_cannot_win():
    run = beauty.score_run([None, 150, -1, math.nan, 30], c_bar=100, prize=100, players=PLAYERS)
    assert run.target == 20 and run.winners == (5,)
    assert [s.valid for s in run.seats] == [False, False, False, False, True]
    assert run.seats[1].action == 150 and run.seats[3].action is None  # NaN is not JSON


def test_no_valid_choice_nobody_wins():
    run = beauty.score_run([None] * 5, c_bar=100, prize=100, players=PLAYERS)
    assert run.target is None and run.winners == () and all(s.payoff == 0 for s in run.seats)


def test_equilibrium_everyone_zero_everyone_ties():
    run = beauty.score_run([0.0] * 5, c_bar=57, prize=100, players=PLAYERS)
    assert run.winners == (1, 2, 3, 4, 5)
    assert all(s.payoff == s.ne_payoff == 20 for s in run.seats)


@given(st.lists(numbers, min_size=1, max_size=8), st.integers(1, 10_000), st.floats(1, 1e6))
def test_prize_is_paid_out_exactly_when_anyone_is_valid(choices, c_bar, prize):
    run = beauty.score_run(choices, c_bar=c_bar, prize=prize, players=["p"] * len(choices))
    total = math.fsum(s.payoff for s in run.seats)
    if any(s.valid for s in run.seats):
        assert math.isclose(total, prize, rel_tol=1e-12)
        assert all(run.seats[w - 1].valid for w in run.winners)
    else:
        assert total == 0 and run.winners == ()
