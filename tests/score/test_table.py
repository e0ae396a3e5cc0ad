"""The table of seats: one session as pure steps, driven here as a front end would, with no evals."""
import random

import pytest

from econarena_evals.core.prompts import prompt_text
from econarena_evals.games import cell as make_cell
from econarena_evals.games import draw_session
from econarena_evals.games.builtin import LevelKPlayer, NashPlayer
from econarena_evals.score.metrics import METRICS
from econarena_evals.score.table import SeatReply, Table, call_seed

CELLS = {
    "beauty_L": {"game": "beauty", "c_bar_min": 10, "c_bar_max": 100},
    "beauty_hist": {"game": "beauty", "c_bar_min": 10, "c_bar_max": 100, "history_runs": 3},
    "auction_L": {"game": "auction"},
}


def table(name, seats=("nash", "level1", "level1", "nash", "level1"), seed=8):
    cell = make_cell(CELLS[name])
    return Table(name, cell, draw_session(random.Random(3), 3, cell), list(seats), seed)


def play(t, players):
    """Drive the table to its end as a front end does; the number of waves it took."""
    waves = 0
    while requests := t.wave():
        waves += 1
        replies = {r.key: SeatReply(players[r.player].reply(prompt_text(r.prompt), r.seed)) for r in requests}
        for run in sorted({r.run for r in requests}):
            t.take(run, [replies[(run, seat)] for seat in range(1, t.cell.seats + 1)])
    return waves


PLAYERS = {"nash": NashPlayer(), "level1": LevelKPlayer(k=1)}


@pytest.mark.parametrize("name, waves", [("beauty_L", 1), ("auction_L", 1), ("beauty_hist", 10)])
def test_a_table_plays_its_runs_in_the_waves_history_allows_and_ends(name, waves):
    t = table(name)
    assert play(t, PLAYERS) == waves
    assert t.done and t.wave() == []
    result = t.result(["nash", "level1", "absent"])
    assert set(result) == {"nash", "level1"}  # a player that sat nowhere has no figures
    assert all(0 <= result[p][m] <= 1 for p in result for m in METRICS)


def test_each_request_carries_its_seat_its_player_and_the_seed_of_run_and_seat():
    t = table("beauty_L", seats=("a", "b", "c", "d", "e"))
    requests = t.wave()
    assert [r.key for r in requests] == [(run, seat) for run in range(10) for seat in range(1, 6)]
    assert [r.player for r in requests[:5]] == ["a", "b", "c", "d", "e"]
    assert all(r.seed == call_seed(8, "beauty_L", 3, r.run, r.seat) for r in requests)
    assert len({r.seed for r in requests}) == len(requests)


def test_history_shows_the_scored_runs_in_the_next_prompt():
    t = table("beauty_hist")
    first = t.wave()
    assert [r.run for r in first] == [0] * 5
    t.take(0, [SeatReply('{"choice": 7}')] * 5)
    later = t.wave()
    assert [r.run for r in later] == [1] * 5
    other = table("beauty_hist")
    other.take(0, [SeatReply('{"choice": 9}')] * 5)
    assert prompt_text(later[0].prompt) != prompt_text(other.wave()[0].prompt)  # run 1's prompt shows run 0


def test_a_run_kept_from_a_log_is_not_asked_again_and_scores_the_same():
    played = table("auction_L")
    play(played, PLAYERS)
    resumed = table("auction_L")
    for run in (0, 4, 9):  # as resume hands over the runs a log finished
        resumed.keep(run, played.event(run))
    assert {r.run for r in resumed.wave()} == set(range(10)) - {0, 4, 9}
    play(resumed, PLAYERS)
    assert [resumed.event(r) for r in range(10)] == [played.event(r) for r in range(10)]
    assert resumed.result(["nash", "level1"]) == played.result(["nash", "level1"])


def test_finish_reasons_reach_the_event_and_the_cut_off_count():
    t = table("beauty_L", seats=("x",) * 5)
    for run in range(10):
        t.take(run, [SeatReply('{"choice": 0}', "length" if run < 2 else "stop")] + [SeatReply('{"choice": 0}')] * 4)
    assert t.event(0)["seats"][0]["finish_reason"] == "length"
    assert t.cut_off("x") == 2


def test_a_garbage_reply_is_a_scored_rule_break_not_an_error():
    t = table("beauty_L", seats=("x", "y", "y", "y", "y"))
    for run in range(10):
        t.take(run, [SeatReply("\x00 no json {")] + [SeatReply('{"choice": 3}')] * 4)
    assert t.result(["x"])["x"]["rule_following"] == 0


def test_wrong_counts_are_refused():
    with pytest.raises(ValueError, match="4 players for 5 seats"):
        table("beauty_L", seats=("a",) * 4)
    t = table("beauty_L")
    with pytest.raises(ValueError, match="3 replies for 5 seats"):
        t.take(0, [SeatReply("{}")] * 3)
    with pytest.raises(ValueError, match="0 of 10 runs scored"):
        t.result(["nash"])
