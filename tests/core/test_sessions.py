import random
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from econarena_evals.core.sessions import seat_players, unique_names, waves
from econarena_evals.games import cell as make_cell
from econarena_evals.games import check_cell, draw_session, session_from_sample

from conftest import REGISTRY, ROOT


def test_self_play_fills_every_seat_with_player_zero():
    assert seat_players(1, 5, 7) == [0] * 5


@given(st.integers(1, 5), st.integers(1, 5), st.integers(0, 1000))
def test_evaluated_seat_rotates_and_others_cycle(n_players, n_seats, session):
    seats = seat_players(n_players, n_seats, session)
    assert seats[session % n_seats] == 0
    others = [p for i, p in enumerate(seats) if i != session % n_seats]
    if n_players > 1:
        assert others == [1 + (k % (n_players - 1)) for k in range(len(others))]


def test_arena_of_two_over_five_sessions_puts_the_evaluated_player_in_every_seat():
    assert {seat_players(2, 5, s).index(0) for s in range(5)} == set(range(5))


def test_unique_names():
    assert unique_names(["a", "b", "a", "a"]) == ["a", "b", "a#2", "a#3"]


def test_waves_without_history_are_one_and_with_history_are_runs():
    assert waves(4, 0) == [[0, 1, 2, 3]] and waves(3, 3) == [[0], [1], [2]]


def test_auction_values_follow_the_reconstructed_distribution():
    cell = make_cell({"game": "auction"})
    values = [v for i in range(200) for run in draw_session(random.Random(i), i, cell).drawn.values for v in run]
    assert all(1 <= v <= 100 for v in values)
    assert abs(sum(values) / len(values) - 49.5) < 1  # int() truncates N(50, 10) towards 0


def test_samples_are_checked_against_the_cell():
    cell = make_cell({"game": "beauty", "c_bar_min": 10, "c_bar_max": 100})
    assert session_from_sample({"session": 1, "c_bar": 50}, cell).drawn.c_bar == 50
    with pytest.raises(ValueError, match="drawn for other args; draw one for these"):
        session_from_sample({"session": 1, "c_bar": 100}, cell)
    with pytest.raises(ValueError, match="values"):
        session_from_sample({"session": 1, "values": [[1] * 5] * 3}, make_cell({"game": "auction"}))


def test_invalid_cell_parameters_are_named():
    with pytest.raises(ValueError, match="fee"):
        check_cell(make_cell({"game": "auction", "fee": 500}))


@pytest.mark.e2e
def test_shipped_samples_are_what_the_generator_makes():
    proc = subprocess.run([sys.executable, "-m", "econarena_evals.run.make_samples", "--check",
                           "--registry", str(REGISTRY)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    counts = Counter(p.name.rsplit("_", 1)[1] for p in (REGISTRY / "data" / "econarena").glob("*.jsonl"))
    assert counts == {"dev.jsonl": 10, "test.jsonl": 10}
    for p in (REGISTRY / "data" / "econarena").glob("*_dev.jsonl"):
        assert len(p.read_text().splitlines()) == 20
