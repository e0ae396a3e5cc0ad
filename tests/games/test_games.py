"""The game protocol's contract, checked once for every game in the registry.

Each game is set up from its own registry YAML and its shipped samples, so a new game is tested
here as soon as it is listed in ``games.GAMES`` and has a cell.
"""
from __future__ import annotations

import json
import math
import random
from functools import lru_cache

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from econarena_evals.core.prompts import fmt, prompt_text
from econarena_evals.core.sessions import CellConfig, Session
from econarena_evals.games import GAMES, MEMBERS, cell, outcome_from_event, read_prompt, run_event, session_from_sample
from econarena_evals.games import first_price as fp
from econarena_evals.games.protocol import PLAYER_KINDS, REPORT_MEMBERS, RULE_MEMBERS
from econarena_evals.log.evallog import rescore_events
from econarena_evals.score.metrics import METRICS, distance_to_ne, session_metrics

from conftest import REGISTRY

NAMES = sorted(GAMES)


@lru_cache(maxsize=None)
def first_cell(name: str) -> tuple[CellConfig, tuple[Session, ...]]:
    """The game's first self-play dev cell in the registry, with its shipped sessions."""
    entries = yaml.safe_load((REGISTRY / "evals" / "econarena.yaml").read_text())
    for key, spec in entries.items():
        args = spec.get("args") if isinstance(spec, dict) else None
        if args and args.get("game") == name and key.endswith(".dev.v0") and not args.get("opponents"):
            config = cell(args)
            lines = (REGISTRY / "data" / args["samples_jsonl"]).read_text().splitlines()
            return config, tuple(session_from_sample(json.loads(line), config) for line in lines)
    raise AssertionError(f"game {name} has no dev cell in the registry")


def ne_actions(name: str, cell: CellConfig, session: Session, run: int) -> list[float]:
    """Each seat's NE action, as econarena/nash finds it: by reading its own prompt."""
    game = GAMES[name]
    out = []
    for seat in range(1, cell.seats + 1):
        facts = read_prompt(game.seat_prompt(cell, session, run, seat, ()))
        out.append(game.nash(facts, random.Random(0))[0])
    return out


@pytest.mark.parametrize("name", NAMES)
def test_module_has_every_member_of_the_protocol(name):
    game = GAMES[name]
    missing = [m for m in MEMBERS if not hasattr(game, m)]
    assert not missing and game.NAME == name
    assert sorted(game.PLAYERS) == sorted(PLAYER_KINDS) and all(callable(p) for p in game.PLAYERS.values())


def test_the_rules_and_the_report_s_view_share_only_the_name():
    assert set(RULE_MEMBERS) & set(REPORT_MEMBERS) == {"NAME"}
    assert set(MEMBERS) == set(RULE_MEMBERS) | set(REPORT_MEMBERS) and len(MEMBERS) == len(set(MEMBERS))


@pytest.mark.parametrize("name", NAMES)
def test_ne_play_scores_one_on_every_part_but_win_rate(name):
    game = GAMES[name]
    cell, sessions = first_cell(name)
    for session in sessions[:5]:
        runs = []
        for run in range(cell.runs):
            actions = ne_actions(name, cell, session, run)
            outcome = game.score(cell, session, run, actions, ["me"] * cell.seats)
            assert [s.ne_action for s in outcome.seats] == actions  # the player's NE is the scorer's
            assert all(s.payoff == s.ne_payoff for s in outcome.seats)
            runs.append(outcome)
        m = session_metrics(runs, "me")
        assert (m["rationality"], m["ne_proximity"], m["rule_following"], m["convergence"]) == (1, 1, 1, 1)
        assert m["win_rate"] == 0.2 and m["eas"] == 0.84


action = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.floats(-1e3, 1e5),
                   st.integers(-10, 10**6).map(float))


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data())
def test_a_rule_break_never_raises_and_scores_as_one(name, data):
    game = GAMES[name]
    cell, sessions = first_cell(name)
    session = data.draw(st.sampled_from(sessions[:3]))
    actions = data.draw(st.lists(action, min_size=cell.seats, max_size=cell.seats))
    outcome = game.score(cell, session, 0, actions, ["me"] * cell.seats)
    for a, s in zip(actions, outcome.seats):
        in_range = a is not None and math.isfinite(a) and 0 <= a <= outcome.scale
        assert s.valid == in_range
        if not s.valid:
            assert distance_to_ne(s, outcome.scale) == 1
    m = session_metrics([outcome], "me")
    assert all(0 <= m[k] <= 1 for k in METRICS)
    event = json.loads(json.dumps(run_event(outcome, cell="c", session=0, run=0, runs=1, history_runs=0,
                                            game_params=game.event_params(cell, session, 0))))
    assert outcome_from_event(event) == outcome
    assert rescore_events([event], ["me"])[0][0]["me"] == m


def beauty_payoffs(cell: CellConfig, session: Session, run: int, actions: list) -> list[float]:
    ok = [i for i, a in enumerate(actions) if a is not None and 0 <= a <= session.drawn.c_bar]
    if not ok:
        return [0.0] * len(actions)
    target = 2 / 3 * sum(actions[i] for i in ok) / len(ok)
    best = min(abs(actions[i] - target) for i in ok)
    winners = [i for i in ok if abs(actions[i] - target) - best <= 1e-9 * session.drawn.c_bar]
    return [cell.params.prize / len(winners) if i in winners else 0.0 for i in range(len(actions))]


def auction_payoffs(price_of):
    def payoffs(cell: CellConfig, session: Session, run: int, actions: list) -> list[float]:
        values = session.drawn.values[run]
        ok = [i for i, a in enumerate(actions) if a is not None and 0 <= a <= cell.params.assets]
        pay = [cell.params.assets if i in ok else cell.params.assets - cell.params.fee for i in range(len(actions))]
        if ok:
            winner = max(ok, key=lambda i: (actions[i], -i))
            others = sorted((actions[i] for i in ok if i != winner), reverse=True)
            pay[winner] = cell.params.assets - price_of(actions[winner], others) + values[winner]
        return pay
    return payoffs


# The rules written out again, independently of the package (contract §3, §4 and §11), by game: a
# game's independent oracle is its own test's to write, so a game without one here (a new game, or one
# from outside the package: tests/games/test_outside_game.py) is held to the rest of this module.
DIRECT_PAYOFFS = {
    "beauty": beauty_payoffs,
    "auction": auction_payoffs(lambda bid, others: others[0] if others else 0.0),
    "first_price": auction_payoffs(lambda bid, others: bid),
}


@pytest.mark.parametrize("name", sorted(set(DIRECT_PAYOFFS) & set(NAMES)))
@given(data=st.data())
def test_payoffs_match_a_direct_computation(name, data):
    game = GAMES[name]
    cell, sessions = first_cell(name)
    session = data.draw(st.sampled_from(sessions))
    run = data.draw(st.integers(0, cell.runs - 1))
    upper = game.action_range(game.event_params(cell, session, run))[1]
    # integers make ties likely; a few out-of-range and unparseable answers too
    actions = data.draw(st.lists(st.one_of(st.none(), st.integers(-2, int(upper) + 2).map(float)),
                                 min_size=cell.seats, max_size=cell.seats))
    outcome = game.score(cell, session, run, actions, ["me"] * cell.seats)
    expected = DIRECT_PAYOFFS[name](cell, session, run, actions)
    assert [s.payoff for s in outcome.seats] == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_prompts_name_the_seat_and_the_range(name):
    game = GAMES[name]
    cell, sessions = first_cell(name)
    session = sessions[0]
    outcome = game.score(cell, session, 0, [None] * cell.seats, ["me"] * cell.seats)
    for seat in range(1, cell.seats + 1):
        text = prompt_text(game.seat_prompt(cell, session, 0, seat, ()))
        assert f"You are Player {seat}" in text
        assert f"between 0 and {fmt(outcome.scale)}" in text  # the valid range is the distance scale
        facts = read_prompt(text)
        assert (facts.game, facts.seat, facts.n, facts.upper) == (name, seat, cell.seats, outcome.scale)


def test_every_game_reads_only_its_own_prompt():
    for name in NAMES:
        cell, sessions = first_cell(name)
        text = prompt_text(GAMES[name].seat_prompt(cell, sessions[0], 0, 1, ()))
        assert [other for other in NAMES if GAMES[other].read_prompt(text) is not None] == [name]


def test_the_first_price_prompt_says_the_winner_pays_its_own_bid():
    cell, sessions = first_cell(fp.NAME)
    text = prompt_text(fp.seat_prompt(cell, sessions[0], 0, 1, ()))
    assert "first-price sealed-bid auction" in text and "The winner pays its own bid" in text
    assert "mean 50 and standard deviation 10" in text and "between 1 and 100" in text
