"""econarena/ch, the cognitive-hierarchy player: its beauty choices fit back to its own τ, its
bids are valid, and its registry entries run through the real oaieval."""
from __future__ import annotations

import json
import math
import random
import statistics

import pytest
from test_games import first_cell

from econarena_evals.core import depth
from econarena_evals.core.answers import parse_choice
from econarena_evals.core.prompts import prompt_text
from econarena_evals.fns.players import CognitiveHierarchyPlayer
from econarena_evals.games import GAMES, beauty, read_prompt
from econarena_evals.log.evallog import read_log

from conftest import REGISTRY, base_env, cli, run_cli

pytestmark = pytest.mark.usefixtures("recorder")


def answer(player, prompt, seed):
    return parse_choice(player(prompt, seed=seed).get_completions()[0])


@pytest.mark.parametrize("tau", [0.5, 1.5, 3.0])
def test_first_run_beauty_choices_fit_back_to_the_players_tau(tau):
    """600 first-run choices through the player class, on the real prompts of beauty_L's sessions
    (c_bar varies by session), every seat; the ML fit (n = the table's size) recovers τ within 0.3."""
    cell, sessions = first_cell(beauty.NAME)
    player = CognitiveHierarchyPlayer(tau=tau)
    shares = []
    for seed in range(600):
        session = sessions[seed % len(sessions)]
        prompt = beauty.seat_prompt(cell, session, 0, seed % cell.seats + 1, ())
        choice = answer(player, prompt, seed)
        assert 0 <= choice <= session.drawn.c_bar
        shares.append(choice / session.drawn.c_bar)
    tau_hat, sigma_hat = depth.fit_ch(shares, n=cell.seats)
    assert abs(tau_hat - tau) <= 0.3, (tau_hat, sigma_hat)
    assert 0.02 <= sigma_hat <= 0.045  # the player's σ, 0.03


def test_choices_repeat_with_the_seed_and_differ_across_seeds():
    cell, sessions = first_cell(beauty.NAME)
    prompt = beauty.seat_prompt(cell, sessions[0], 0, 1, ())
    player = CognitiveHierarchyPlayer()
    assert answer(player, prompt, 7) == answer(CognitiveHierarchyPlayer(), prompt, 7)
    assert len({answer(player, prompt, s) for s in range(20)}) > 10


def test_with_history_the_draw_is_scaled_to_the_last_average():
    """With history, step 0's mean is the last average a instead of c_bar / 2: choices lie in
    [0, 2a] and their mean is 2a times the first run's mean share."""
    past = [beauty.PastRun(run=1, actions=(10, 20, 30, None, 40), winners=(2,), average=25.0, target=50 / 3)]
    prompt = beauty.prompt(seat=2, n=5, run=2, runs=10, c_bar=100, prize=100, past=past)
    first = beauty.prompt(seat=2, n=5, run=1, runs=10, c_bar=100, prize=100)
    player = CognitiveHierarchyPlayer(tau=1.5)
    later = [answer(player, prompt, s) for s in range(2000)]
    assert all(0 <= x <= 50 for x in later)
    first_mean = statistics.mean(answer(player, first, s) / 100 for s in range(2000))
    assert abs(statistics.mean(later) / 50 - first_mean) < 0.02


@pytest.mark.parametrize("name", ["auction", "first_price"])
@pytest.mark.parametrize("tau", [0.5, 3.0])
def test_auction_bids_are_valid_and_step_0_is_the_random_bidder(name, tau):
    """Every bid is in [0, A]; step k >= 1 bids as level k (the value, or b(v)), step 0 uniformly, so
    the share of level-k bids is 1 - e^{-τ}."""
    game = GAMES[name]
    cell, sessions = first_cell(name)
    player = CognitiveHierarchyPlayer(tau=tau)
    draws = 1000
    level = 0
    for seed in range(draws):
        session = sessions[seed % len(sessions)]
        prompt = game.seat_prompt(cell, session, seed % cell.runs, seed % cell.seats + 1, ())
        bid = answer(player, prompt, seed)
        assert bid is not None and math.isfinite(bid) and 0 <= bid <= cell.params.assets
        facts = read_prompt(prompt_text(prompt))
        level += bid == game.level_k(facts, random.Random(0), 1)[0]
    expected = 1 - math.exp(-tau)
    assert abs(level / draws - expected) < 4 * math.sqrt(expected * (1 - expected) / draws) + 0.01


@pytest.mark.parametrize("bad", [{"tau": -1}, {"tau": "nan"}, {"sigma": 0}, {"sigma": 2}])
def test_bad_args_are_refused(bad):
    with pytest.raises(ValueError):
        CognitiveHierarchyPlayer(**bad)


@pytest.mark.parametrize("fn, cell, extra, player", [
    ("econarena/ch-1.5", "beauty_L", (), "econarena/ch-1.5"),
    ("econarena/ch-0.5", "auction_L", (), "econarena/ch-0.5"),
    ("econarena/ch-3", "fpauction_L", (), "econarena/ch-3"),
    # its own args change its play: they are part of the player's name
    ("econarena/ch", "beauty_L", ("--completion_args", "tau=2.5,sigma=0.05"), "econarena/ch(tau=2.5, sigma=0.05)"),
])
@pytest.mark.e2e
def test_registry_entries_run_through_oaieval(fn, cell, extra, player, tmp_path):
    log_path = tmp_path / "log.jsonl"
    run_cli([cli("oaieval"), fn, f"econarena.{cell}", "--registry_path", str(REGISTRY), "--record_path",
             str(log_path), "--max_samples", "2", *extra], base_env())
    log = read_log(log_path)
    assert not log.problems and log.players == [player]
    assert log.final_report["sessions"] == 2 and log.final_report["rule_following"] == 1
    rows = [json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]
    models = {r["data"]["model"] for r in rows if r.get("type") == "sampling"}
    assert models == {fn}
