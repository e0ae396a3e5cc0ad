"""Arena mode and opponent cells through the real oaieval / oaievalset, re-scored from the log."""
from __future__ import annotations

from collections import Counter

import pytest
from test_e2e import assert_rescores, oaieval, oaievalset_logs

from econarena_evals.score.metrics import METRICS

from conftest import base_env

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

ALL_CELLS = ["beauty_L", "beauty_M", "beauty_H", "beauty_hist", "auction_L", "auction_M", "auction_H",
             "auction_hist", "fpauction_L", "fpauction_hist"]
OPPONENT_CELLS = ["beauty_L_vs_rational", "beauty_hist_vs_rational", "auction_L_vs_rational",
                  "beauty_L_vs_humans", "beauty_hist_vs_humans"]


def assert_every_player_rescores(log) -> None:
    """The evaluated player's metrics and every other player's <metric>/<name> come back from the runs."""
    _, report = log.rescore()
    for key, value in report.items():
        assert log.final_report[key] == value, key
    for name in log.players[1:]:
        assert f"eas/{name}" in log.final_report


def test_model_against_a_reference_player(model_env, server, tmp_path):
    log = oaieval("gpt-4,econarena/level1", "beauty_L", model_env, tmp_path / "log.jsonl", "--max_samples", "5")
    seats = Counter()
    for r in log.runs:
        for s in r["seats"]:
            seats[s["player"]] += 1
    assert seats == {"gpt-4": 5 * 10, "econarena/level1": 5 * 10 * 4}
    # the plan counts the calls that go to an endpoint: the model's, not the built-in player's
    assert log.plan["calls"] == 5 * 10
    # the evaluated seat rotates with the session index
    for r in log.runs:
        assert next(s["seat"] for s in r["seats"] if s["player"] == "gpt-4") == r["session"] % 5 + 1
    assert len({r["session"] % 5 for r in log.runs}) > 1
    assert_every_player_rescores(log)
    assert_rescores(log)


@pytest.mark.parametrize("cell,n_players", [(cell, 2 + i % 4) for i, cell in enumerate(ALL_CELLS)])
def test_any_number_of_players_in_every_cell(cell, n_players, tmp_path):
    """Every cell with an arena, and every arena size from 2 to 5 players across the cells."""
    players = ["econarena/random", "econarena/nash", "econarena/level1", "econarena/human", "econarena/overbid"]
    log = oaieval(",".join(players[:n_players]), cell, base_env(), tmp_path / "log.jsonl", "--max_samples", "2")
    assert log.final_report["sessions"] == 2
    seated = {s["player"] for r in log.runs for s in r["seats"]}
    assert seated == set(players[:n_players])
    assert_every_player_rescores(log)


def test_duplicate_names_on_the_command_line_stay_apart(tmp_path):
    log = oaieval("econarena/random,econarena/random", "beauty_L", base_env(), tmp_path / "log.jsonl",
                  "--max_samples", "2")
    assert "eas/econarena/random#2" in log.final_report
    assert_every_player_rescores(log)


def test_opponent_cells_seat_the_yaml_players(tmp_path):
    log = oaieval("econarena/random", "beauty_hist_vs_humans", base_env(), tmp_path / "log.jsonl",
                  "--max_samples", "3")
    assert Counter(s["player"] for r in log.runs for s in r["seats"]) == {
        "econarena/random": 30, "econarena/human": 120}
    assert_every_player_rescores(log)
    # the evaluated player's name may also be an opponent's: they are still scored apart
    log = oaieval("econarena/nash", "auction_L_vs_rational", base_env(), tmp_path / "nash.jsonl",
                  "--max_samples", "2")
    r = log.final_report
    assert r["rationality"] == r["ne_proximity"] == r["rationality/econarena/nash#2"] == 1
    # one winner a run: the evaluated seat's wins and the four opponent seats' add up to every run
    assert abs(r["win_rate"] + 4 * r["win_rate/econarena/nash#2"] - 1) < 1e-9
    assert_every_player_rescores(log)


def test_the_opponent_eval_set_completes_offline(tmp_path):
    """econarena-arena through oaievalset (econarena-full runs in test_e2e, with the Nash player)."""
    logs = oaievalset_logs("econarena/random", "econarena-arena", base_env(), tmp_path)
    assert sorted(lg.cell for lg in logs) == sorted(OPPONENT_CELLS)
    for log in logs:
        assert not log.problems and log.final_report["sessions"] == 20
        assert all(log.final_report[m] is not None for m in METRICS)
        assert_every_player_rescores(log)
