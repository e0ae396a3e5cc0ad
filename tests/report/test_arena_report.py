"""econarena-report on a melee log: the arena section in report.json, report.md and report.html,
one entry per player, kept apart from the self-play columns."""
from __future__ import annotations

import json
import re

import pytest
from browser import browse

from conftest import base_env, cli, run_cli

pytestmark = pytest.mark.e2e

ROSTER = ["econarena/nash", "econarena/random", "econarena/level1", "econarena/level2", "econarena/human",
          "econarena/overbid"]


def test_the_report_rates_every_player_of_a_melee_apart_from_the_self_play_columns(tmp_path):
    melee, selfplay = tmp_path / "melee.jsonl", tmp_path / "self.jsonl"
    run_cli([cli("oaieval"), ",".join(ROSTER), "econarena.auction_L_melee", "--record_path", str(melee),
             "--extra_eval_params", "tables_per_player=4"], base_env(), cwd=tmp_path)
    run_cli([cli("oaieval"), "econarena/nash", "econarena.auction_L", "--record_path", str(selfplay),
             "--max_samples", "2"], base_env(), cwd=tmp_path)
    out = tmp_path / "report"
    run_cli([cli("econarena-report"), str(melee), str(selfplay), "--out", str(out)], base_env(), cwd=tmp_path)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    (column, entry), = report["arena"].items()
    assert column.startswith("auction_L_melee") and entry["cell"] == "auction_L_melee" and entry["tables"] == 5
    players = entry["players"]
    assert sorted(p["player"] for p in players) == sorted(ROSTER)
    assert [p["rating"] for p in players] == sorted((p["rating"] for p in players), reverse=True)
    for p in players:
        assert p["interval"][0] <= p["rating"] <= p["interval"][1]
        assert p["rank_interval"][0] <= p["rank"] <= p["rank_interval"][1]
        assert p["tables"] >= 4 and p["eas"] is not None
    assert len(entry["head_to_head"]) == len(ROSTER) * (len(ROSTER) - 1) // 2
    # in the second-price auction truthful bidding is dominant: the Nash bidder earns most
    assert players[0]["player"] == "econarena/nash"
    # the self-play columns hold the self-play log alone
    assert {d["column"] for d in report["conditions"]} == {"auction_L"}
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "## Arena: melee tournaments" in md and "Head to head" in md
    # the arena section stands before the inputs, the report's appendix
    assert md.index("\n## Arena: melee tournaments") < md.index("\n## Inputs") and md.rstrip().endswith("|")
    # its heading says what it is in words; the roster's tag, kept, is explained in the legend
    heading = next(line for line in md.splitlines() if line.startswith("### auction_L_melee"))
    said_so = re.fullmatch(r"### auction_L_melee: a tournament of 6 players \(roster (#[0-9a-f]{6}); "
                           r"tables_per_player=4\)", heading)
    assert said_so and f"vs 5 players {said_so.group(1)}" in column and "roster #tag (#a48811, say) is a short hash of the roster's" in md
    # the inputs name a melee log by its roster, not its first player
    said = {n["path"]: n["player"] for n in report["inputs"]}
    roster = "6 players: econarena/nash, econarena/random, econarena/level1 and 3 more"
    assert said == {"melee.jsonl": roster, "self.jsonl": "econarena/nash"}, said
    assert f"| melee.jsonl | {roster} |" in md
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="arena"' in page and all(p in page for p in ROSTER)
    assert f"<h3>{heading[4:]}</h3>" in page and roster in page
    # the page opens on the count of what was read, then the ranking; its bar links the arena where it stands
    assert page.index('<p class="lead">') < page.index('id="ranking"')
    nav = re.search(r"<nav>(.*?)</nav>", page).group(1)
    assert re.findall(r">([^<]+)</a>", nav) == ["Ranking", "Leaderboard", "Components", "Rule breaks", "Arena",
                                               "Sessions", "Plots", "Inputs"], nav
    assert 'href="#arena-ratings"' in nav and 'id="arena-ratings"' in page
    # econarena-summary rates the roster too, best first, as report.json does
    summary = run_cli([cli("econarena-summary"), str(melee), str(selfplay)], base_env(), cwd=tmp_path).stdout
    block = summary[summary.index("arena auction_L_melee"):].splitlines()
    assert [line.split()[1] for line in block[2:2 + len(ROSTER)]] == [p["player"] for p in players]
    assert "\narena " not in run_cli([cli("econarena-summary"), str(selfplay)], base_env(), cwd=tmp_path).stdout
    # a melee log alone is a report: the arena section, exit 0
    run_cli([cli("econarena-report"), str(melee), "--out", str(tmp_path / "alone")], base_env(), cwd=tmp_path)
    alone_md = (tmp_path / "alone" / "report.md").read_text(encoding="utf-8")
    assert alone_md.index("\n## Arena: melee tournaments") < alone_md.index("\n## Inputs")
    # the self-play log alone: no arena section, and no link to one
    run_cli([cli("econarena-report"), str(selfplay), "--out", str(tmp_path / "self")], base_env(), cwd=tmp_path)
    self_page = (tmp_path / "self" / "report.html").read_text(encoding="utf-8")
    assert "arena-ratings" not in self_page and '<a href="#rule-breaks">Rule breaks</a>' in self_page
    alone = json.loads((tmp_path / "alone" / "report.json").read_text(encoding="utf-8"))
    assert alone["conditions"] == [] and alone["arena"][column]["players"] == players


def test_a_report_of_melee_logs_alone_counts_them_and_shows_no_empty_table_of_columns(tmp_path):
    """Melee logs alone (the README's offline arena, two cells): the report's first figures count them and
    the players they rate, and no empty leaderboard, metric or session table stands before the arena."""
    logs = tmp_path / "logs"
    beauty = ["econarena/nash", "econarena/ch", "econarena/level2"]
    for roster, cell in ((ROSTER, "auction_L_melee"), (beauty, "beauty_L_melee")):
        run_cli([cli("oaieval"), ",".join(roster), f"econarena.{cell}", "--record_path", str(logs / f"{cell}.jsonl"),
                 "--extra_eval_params", "tables_per_player=2"], base_env(), cwd=tmp_path)
    rated = len(set(ROSTER) | set(beauty))  # 7: econarena/ch plays the beauty contest alone, the others both
    said = (f"2 log(s): 2 of melee tournaments ({rated} player(s) rated in 2 tournament column(s), under Arena: "
            "melee tournaments), none of self-play, arena or opponent cells.")
    no_columns = "No log of a self-play, arena or opponent cell, so no table of columns"
    out = tmp_path / "report"
    run_cli([cli("econarena-report"), str(logs), "--out", str(out)], base_env(), cwd=tmp_path)
    md = (out / "report.md").read_text(encoding="utf-8")
    assert said in md and no_columns in md and md.count("\n### auction_L_melee") == 1
    assert "## Leaderboard" not in md and "## rationality" not in md and "## Plots" not in md
    page = (out / "report.html").read_text(encoding="utf-8")
    assert f'<p class="lead">{said}</p>' in page and no_columns in page and 'id="arena"' in page
    assert 'id="leaderboard"' not in page and 'id="sessions"' not in page and all(p in page for p in ROSTER + beauty)
    assert 'data-ready="1"' in browse(out / "report.html")  # the page's script ran to its end without a browser
    summary = run_cli([cli("econarena-summary"), str(logs)], base_env(), cwd=tmp_path).stdout
    flat = " ".join(summary.split())
    assert flat.startswith(said) and no_columns in flat
    assert "sessions  errored  status" not in summary and summary.count("\narena ") == 2


def test_a_tournament_of_one_finished_table_says_its_intervals_are_no_certainty():
    """A bootstrap over one table draws that table every time: its intervals have no width."""
    from econarena_evals.report.arena import _tables_text

    one = _tables_text({"tables": 1})
    assert one.startswith("1 table finished.") and "too few for intervals" in one
    three = _tables_text({"tables": 3})
    assert three == "3 tables finished."
