"""The leaderboard: models sorted by the mean EAS over the cells, each with a bootstrapped rank interval.

On logs made for the purpose: three built-in players whose order is known (Nash play above level 1
above uniform random play in every beauty-contest cell), and hand-made figures where the data can or
cannot tell two models apart.
"""
from __future__ import annotations

import json
import random
from html.parser import HTMLParser

import numpy as np
import pytest
from browser import browse

from econarena_evals.report.leaderboard import RANK_HEAD, Entry, leaderboard
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
    assert "| 1 (1-1) | econarena/nash | 0.840 \\[0.840, 0.840\\] | 2 of 2 |" in md


@pytest.mark.e2e
def test_the_summary_prints_the_same_leaderboard(logs, report):
    _, data = report
    proc = run_cli([cli("econarena-summary"), "--leaderboard", str(logs)], base_env())
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(RANK_HEAD) and lines[0].split()[4] == "player"
    rows = [line.split() for line in lines[2:5]]
    assert [(r[0], r[1], r[2]) for r in rows] == [("1", "(1-1)", PLAYERS[0]), ("2", "(2-2)", PLAYERS[1]),
                                                  ("3", "(3-3)", PLAYERS[2])]
    for r, row in zip(rows, data["leaderboard"]["rows"]):
        lo, hi = row["ci95"]
        assert " ".join(r[3:6]) == f"{row['eas']:.3f} [{lo:.3f}, {hi:.3f}]"


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


class Tables(HTMLParser):
    """Every table of a page: its head cells and its body rows' cells, as text."""

    def __init__(self):
        super().__init__()
        self.tables, self._cell, self._part = [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"head": [], "rows": []})
        elif tag in ("thead", "tbody", "tfoot"):
            self._part = tag
        elif tag == "tr" and self._part == "tbody":
            self.tables[-1]["rows"].append([])
        elif tag in ("th", "td"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self._cell is not None:
            text = "".join(self._cell).strip()
            if self._part == "thead":
                self.tables[-1]["head"].append(text)
            elif self._part == "tbody":
                self.tables[-1]["rows"][-1].append(text)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


@pytest.mark.e2e  # opens the page in headless Chromium
def test_every_table_of_the_page_lists_the_players_in_the_rankings_order(report):
    """Alphabetically level1 < nash < random; by EAS nash, level1, random: every table of report.html
    with a player column lists them in the ranking's order, and the ranking shows each rank interval."""
    out, data = report
    parser = Tables()
    parser.feed(browse(out / "report.html"))
    ranking = next(t for t in parser.tables if t["head"][:2] == [RANK_HEAD, "player"])
    assert [r[1] for r in ranking["rows"]] == list(PLAYERS) == data["players"]
    for r, row in zip(ranking["rows"], data["leaderboard"]["rows"]):  # "1 (1-1)": the rank and its interval
        assert r[0] == f"{row['rank']} ({row['rank_ci'][0]}-{row['rank_ci'][1]})"
    with_players = [t for t in parser.tables if "player" in t["head"] and t is not ranking]
    # the leaderboard, the five components, the depth table, both diagnostics, rule breaks and their kinds
    assert len(with_players) >= 10
    for t in with_players:
        at = t["head"].index("player")
        listed = list(dict.fromkeys(r[at] for r in t["rows"]))
        assert listed == [p for p in PLAYERS if p in listed] and len(listed) == 3, (t["head"], listed)
    md = (out / "report.md").read_text()
    depth = md[md.index("### Depth of reasoning τ"):]
    assert [line.split(" | ")[0].lstrip("| ") for line in depth.splitlines()[6:9]] == list(PLAYERS)
    # its two tables, named apart in one heading form: the τ by column, then the fits in full
    headings = [line for line in md.splitlines() if line.startswith("#") and "Depth of reasoning" in line]
    assert headings == ["### Depth of reasoning τ: each player's τ by column",
                        "## Depth of reasoning τ: the fits in full"], headings
    assert "Depth of reasoning (τ)" not in md and "Depth of reasoning (τ)" not in (out / "report.html").read_text()


@pytest.mark.e2e  # the report fixture runs the real CLIs
def test_the_players_table_of_report_md_is_in_the_rankings_order(report):
    """report.md's *Players* table (who played, through which fn and endpoint) lists them as every
    other table does, by the ranking (it was alphabetical: level1 before nash)."""
    out, _ = report
    md = (out / "report.md").read_text()
    block = md[md.index("## Players"):].split("\n\n")[1].splitlines()[2:]
    assert [line.split(" | ")[0].lstrip("| ").strip("`") for line in block][:3] == list(PLAYERS), block


@pytest.mark.e2e  # the report fixture runs the real CLIs
def test_paired_comparisons_read_higher_ranked_minus_lower_ranked(report):
    """Alphabetically level1 < nash; ranked nash first: every pair reads the higher-ranked player
    minus the lower-ranked one, in report.json, report.md and report.html (it read level1 − nash)."""
    out, data = report
    place = {p: i for i, p in enumerate(data["players"])}
    assert data["players"] == list(PLAYERS) and data["comparisons"]
    assert all(place[c["a"]] < place[c["b"]] for c in data["comparisons"])
    assert all(c["diff"] > 0 for c in data["comparisons"] if c["metric"] == "eas")  # nash > level1 > random
    md = (out / "report.md").read_text()
    block = md[md.index("## Paired comparisons"):]
    assert "| econarena/nash − econarena/level1 |" in block and "econarena/level1 − econarena/nash" not in block
    page = (out / "report.html").read_text()
    assert "econarena/nash − econarena/level1" in page and "econarena/level1 − econarena/nash" not in page
