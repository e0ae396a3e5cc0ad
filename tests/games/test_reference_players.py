"""Reference players: level-k choices are exact; the human player stays in range and in shape."""
import statistics

import pytest

from econarena_evals.core.answers import parse_choice
from econarena_evals.fns.players import HumanPlayer, LevelKPlayer, OverbiddingBidder, RandomPlayer, ShadingBidder
from econarena_evals.games.auction import prompt as auction_prompt
from econarena_evals.games.beauty import PastRun
from econarena_evals.games.beauty import prompt as beauty_prompt

pytestmark = pytest.mark.usefixtures("recorder")


def answer(player, prompt, seed=0):
    return parse_choice(player(prompt, seed=seed).get_completions()[0])


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("c_bar", [10, 57, 999, 9999])
def test_level_k_without_history_is_exact(k, c_bar):
    prompt = beauty_prompt(seat=3, n=5, run=1, runs=10, c_bar=c_bar, prize=100)
    assert answer(LevelKPlayer(k=k), prompt) == (2 / 3) ** k * c_bar / 2


@pytest.mark.parametrize("k", [1, 2, 3])
def test_level_k_with_history_uses_the_last_average_exactly(k):
    past = [
        PastRun(run=1, actions=(10, 20, 30, None, 40), winners=(2,), average=25.0, target=50 / 3),
        PastRun(run=2, actions=(5, 7, 9, 11.5, 0), winners=(3,), average=32.5 / 5, target=13 / 3),
    ]
    prompt = beauty_prompt(seat=1, n=5, run=3, runs=10, c_bar=50, prize=100, past=past)
    assert answer(LevelKPlayer(k=k), prompt) == (2 / 3) ** k * (32.5 / 5)


def test_level_k_falls_back_when_the_last_run_had_no_valid_choice():
    past = [PastRun(run=1, actions=(None,) * 5, winners=(), average=None, target=None)]
    prompt = beauty_prompt(seat=1, n=5, run=2, runs=10, c_bar=60, prize=100, past=past)
    assert answer(LevelKPlayer(k=1), prompt) == (2 / 3) * 30


def test_level0_is_uniform_over_the_range():
    prompt = beauty_prompt(seat=1, n=5, run=1, runs=10, c_bar=90, prize=100)
    draws = [answer(RandomPlayer(name="econarena/level0"), prompt, seed=s) for s in range(300)]
    assert min(draws) >= 0 and max(draws) <= 90 and abs(statistics.mean(draws) - 45) < 5


def test_auction_reference_bidders():
    prompt = auction_prompt(seat=1, n=5, run=1, runs=10, value=80, assets=100, fee=10)
    assert answer(LevelKPlayer(k=2), prompt) == 80
    assert answer(ShadingBidder(), prompt) == 60
    assert answer(OverbiddingBidder(), prompt) == 100  # 1.25 x 80, capped at the assets
    bids = [answer(HumanPlayer(), prompt, seed=s) for s in range(300)]
    truthful = sum(b == 80 for b in bids) / len(bids)
    assert 0.2 < truthful < 0.5 and statistics.mean(bids) > 80 and max(bids) <= 100


def test_human_first_run_is_nagel_shaped_and_in_range():
    for c_bar in (10, 100, 5000):
        prompt = beauty_prompt(seat=2, n=5, run=1, runs=10, c_bar=c_bar, prize=100)
        draws = [answer(HumanPlayer(), prompt, seed=s) / c_bar for s in range(2000)]
        assert all(0 <= d <= 1 for d in draws)
        assert abs(statistics.mean(draws) - 0.3673) < 0.02
        assert abs(statistics.median(draws) - 0.33) < 0.03


def test_human_with_history_moves_down_like_nagels_sessions():
    past = [PastRun(run=1, actions=(40,) * 5, winners=(1, 2, 3, 4, 5), average=40.0, target=80 / 3)]
    prompt = beauty_prompt(seat=2, n=5, run=2, runs=10, c_bar=100, prize=100, past=past)
    draws = [answer(HumanPlayer(), prompt, seed=s) for s in range(2000)]
    assert abs(statistics.mean(draws) / 40 - 0.72) < 0.03  # Nagel: 39.7 -> 28.6, a factor of 0.72
