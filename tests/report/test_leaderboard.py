"""The leaderboard: models sorted by the mean EAS over the cells, each with a bootstrapped rank interval.

On logs made for the purpose: three built-in players whose order is known (Nash play above level 1
above uniform random play in every beauty-contest cell), and hand-made figures where the data can or
cannot tell two models apart.
"""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from econarena_evals.report.leaderboard import Entry, leaderboard
from econarena_evals.score.ranks import competition_ranks, rank_intervals

from conftest import REGISTRY, base_env, cli, run_cli

PLAYERS = ("econarena/nash", "econarena/level1", "econarena/random")  # best first


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("leaderboard_logs")
    for player in PLAYERS:
        for cell in ("beauty_L", "beauty_M"):
            run_cli([cli("oaieval"), player, f"econarena.{cell}", "--registry_path", str(REGISTRY),
                     "--record_path", str(d / f"{player.split('/')[1]}_{cell}.jsonl"), "--max_samples", "6"],
                    base_env())
    return d


@pytest.fixture(scope="module")
def report(logs, tmp_path_factory):
    out = tmp_path_factory.mktemp("leaderboard_report")
    run_cli([cli("econarena-report"), str(logs), "--out", str(out)], base_env())
    return out, json.loads((out / "report.json").read_text())


@pytest.mark.e2e
def test_the_leaderboard_orders_the_models_and_tells_their_ranks_apart(report):
    out, data = report
    board = data["leaderboard"]
    assert board["group"] == "overall" and board["columns"] == ["beauty_L", "beauty_M"]
    assert [r["player"] for r in board["rows"]] == list(PLAYERS)
    assert [r["rank"] for r in board["rows"]] == [1, 2, 3]
    # Nash play 0.840 and level 1's fixed choice have no spread; random play is far below both
    assert [r["rank_ci"] for r in board["rows"]] == [[1, 1], [2, 2], [3, 3]]
    for row in board["rows"]:  # the model's figure is the overall figure, its cells the conditions' own
        overall = data["overall"][row["player"]]
        assert (row["eas"], row["ci95"], row["columns"]) == (overall["eas"], overall["ci95"], 2)
        for col, cell in row["cells"].items():
            cond = next(c for c in data["conditions"] if (c["player"], c["column"]) == (row["player"], col))
            assert (cell["mean"], cell["ci95"]) == (cond["metrics"]["eas"]["mean"], cond["metrics"]["eas"]["ci95"])
    md = (out / "report.md").read_text()
    assert md.index("## Ranking") < md.index("## Leaderboard: EconArena Score (EAS)")
    assert "| 1 | econarena/nash | 0.840 \\[0.840, 0.840\\] | 2 of 2 |" in md


@pytest.mark.e2e
def test_the_summary_prints_the_same_leaderboard(logs, report):
    _, data = report
    proc = run_cli([cli("econarena-summary"), "--leaderboard", str(logs)], base_env())
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:2] == ["rank", "player"]
    rows = [line.split() for line in lines[2:5]]
    assert [(r[0], r[1]) for r in rows] == [("1", p) for p in PLAYERS[:1]] + [("2", PLAYERS[1]), ("3", PLAYERS[2])]
    for r, row in zip(rows, data["leaderboard"]["rows"]):
        lo, hi = row["ci95"]
        assert " ".join(r[2:5]) == f"{row['eas']:.3f} [{lo:.3f}, {hi:.3f}]"


def entries(figures):
    """Entries of the default self-play group from {column: {player: [eas by session]}}."""
    return [Entry(p, col, "overall", values, dict(enumerate(values)))
            for col, by_player in figures.items() for p, values in by_player.items()]


def test_models_the_sessions_cannot_tell_apart_share_their_rank_interval():
    rng = random.Random(7)
    noise = {col: [rng.gauss(0, 0.08) for _ in range(20)] for col in ("c1", "c2")}
    figures = {col: {"strong": [0.9 + 0.01 * e for e in noise[col]],
                     # close to each other: within the noise of 20 sessions
                     "a": [0.6 + e + rng.gauss(0, 0.05) for e in noise[col]],
                     "b": [0.6 + e + rng.gauss(0, 0.05) for e in noise[col]],
                     "weak": [0.2 + 0.01 * e for e in noise[col]]} for col in ("c1", "c2")}
    board = leaderboard(entries(figures))
    by = {r["player"]: r for r in board["rows"]}
    assert [r["player"] for r in board["rows"]][0] == "strong" and board["rows"][-1]["player"] == "weak"
    assert by["strong"]["rank_ci"] == [1, 1] and by["weak"]["rank_ci"] == [4, 4]
    assert by["a"]["rank_ci"] == by["b"]["rank_ci"] == [2, 3]  # the data cannot order a and b


def test_equal_models_share_a_rank_and_a_missing_cell_is_counted():
    same = [0.5, 0.7, 0.6, 0.55]
    board = leaderboard(entries({"c1": {"x": same, "y": list(same), "z": [0.1] * 4}, "c2": {"x": same, "y": same}}))
    by = {r["player"]: r for r in board["rows"]}
    assert by["x"]["rank"] == by["y"]["rank"] == 1 and by["x"]["rank_ci"] == by["y"]["rank_ci"] == [1, 1]
    assert by["z"]["columns"] == 1 and by["z"]["rank"] == 3


def test_ranks_are_the_same_draws_whatever_else_is_in_other_groups():
    figures = {"c1": {"x": [0.5, 0.6, 0.7], "y": [0.4, 0.65, 0.6]}}
    alone = leaderboard(entries(figures))
    with_test_split = leaderboard(entries(figures) + [Entry("x", "c1.test", "overall (test split)", [0.1], {0: 0.1})])
    assert alone == with_test_split


def test_competition_ranks_count_the_strictly_better():
    assert competition_ranks(np.array([0.5, 0.9, 0.5, 0.1])).tolist() == [2, 1, 2, 4]


def test_rank_memory_grows_with_the_models_not_their_square():
    """Counted: the peak allocation for 4 times the models is about 4 times as large, not 16 times."""
    import tracemalloc

    def peak(n):
        per_column = {c: {f"m{i}": {s: (i + s % 5) / (n + 5) for s in range(20)} for i in range(n)} for c in "ab"}
        tracemalloc.start()
        try:
            rank_intervals(per_column, "test")
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(100), peak(400)
    assert large < 6 * small
