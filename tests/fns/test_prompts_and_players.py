import json
import math

import pytest

from econarena_evals.core.answers import parse_choice
from econarena_evals.fns.players import NashPlayer, RandomPlayer
from econarena_evals.games import beauty, read_prompt, sealed_bid
from econarena_evals.games.auction import prompt as auction_prompt
from econarena_evals.games.beauty import prompt as beauty_prompt


def test_beauty_prompt_states_the_rules_and_reads_back():
    past = [beauty.PastRun(run=2, actions=(1.5, None, 3, 4, 5), winners=(1,), average=10 / 3, target=20 / 9)]
    prompt = beauty_prompt(seat=4, n=5, run=3, runs=10, c_bar=57, prize=100, past=past)
    text = prompt[-1]["content"]
    for phrase in ["Player 4", "5 players", "run 3 of 10", "between 0 and 57", "two thirds", "prize of 100",
                   '"understanding"', '"choice"', '"reason"', "Player 2: invalid", "Winner(s): Player 1"]:
        assert phrase in text
    facts = read_prompt(prompt)
    assert (facts.game, facts.seat, facts.n, facts.run, facts.runs, facts.upper) == ("beauty", 4, 5, 3, 10, 57)
    assert facts.past_averages == (10 / 3,)  # exact: history numbers round-trip


def test_auction_prompt_keeps_values_private():
    past = [sealed_bid.PastRun(run=1, actions=(10, None, 30, 40, 50), winners=(5,), price=40)]
    prompt = auction_prompt(seat=2, n=5, run=2, runs=10, value=61, assets=100, fee=10, past=past)
    text = prompt[-1]["content"]
    for phrase in ["Player 2", "5 bidders", "private value for the item in this run is 61",
                   "between 0 and 100 (your assets)", "entrance fee of 10", "Price paid: 40"]:
        assert phrase in text
    facts = read_prompt(text)
    assert (facts.game, facts.seat, facts.value, facts.upper) == ("auction", 2, 61, 100)
    assert facts.past_bids == ((10, None, 30, 40, 50),)


def test_read_prompt_rejects_other_text():
    with pytest.raises(ValueError):
        read_prompt("What is 2 + 2?")




def test_nash_player_answers_in_the_json_a_model_must_use(recorder):
    b = NashPlayer()(beauty_prompt(seat=1, n=5, run=1, runs=10, c_bar=40, prize=100)).get_completions()[0]
    a = NashPlayer()(auction_prompt(seat=1, n=5, run=1, runs=10, value=61, assets=100, fee=10)).get_completions()[0]
    assert set(json.loads(b)) == {"understanding", "choice", "reason"}
    assert parse_choice(b) == 0 and parse_choice(a) == 61
    assert len(recorder.get_events("sampling")) == 2


def test_random_player_is_uniform_in_range_and_seeded(recorder):
    prompt = beauty_prompt(seat=1, n=5, run=1, runs=10, c_bar=40, prize=100)
    draws = [parse_choice(RandomPlayer()(prompt, seed=s).get_completions()[0]) for s in range(400)]
    assert all(0 <= d <= 40 for d in draws)
    assert math.isclose(sum(draws) / len(draws), 20, abs_tol=2.5)  # mean of U(0, 40), 400 draws
    again = parse_choice(RandomPlayer()(prompt, seed=3).get_completions()[0])
    assert again == draws[3]
