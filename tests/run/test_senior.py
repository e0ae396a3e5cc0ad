"""The senior environment through the real CLIs: a melee of built-in players, its report, and
``econarena-senior`` playing the report's top five again as a condition of its own."""
from __future__ import annotations

import html
import json

import pytest

from econarena_evals.log.evallog import read_log
from econarena_evals.report.arena import title

from conftest import base_env, cli, run_cli

pytestmark = pytest.mark.e2e

ROSTER = ["econarena/nash", "econarena/random", "econarena/noisy-0.1", "econarena/noisy-0.6", "econarena/human",
          "econarena/overbid", "econarena/shade"]


def test_the_top_five_of_a_melee_play_again_as_the_senior_condition(tmp_path):
    melee = tmp_path / "melee.jsonl"
    run_cli([cli("oaieval"), ",".join(ROSTER), "econarena.auction_L_melee", "--record_path", str(melee),
             "--extra_eval_params", "tables_per_player=3"], base_env(), cwd=tmp_path)
    run_cli([cli("econarena-report"), str(melee), "--out", str(tmp_path / "report")], base_env(), cwd=tmp_path)
    (entry,) = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))["arena"].values()
    top = [p["player"] for p in sorted(entry["players"], key=lambda p: p["rank"])[:5]]

    proc = run_cli([cli("econarena-senior"), str(tmp_path / "report"), "--out", str(tmp_path / "senior")], base_env(),
                   cwd=tmp_path)
    assert "environment=senior" in proc.stderr
    senior = read_log(tmp_path / "senior" / "auction_L_melee.senior.jsonl")
    assert senior.spec["completion_fns"] == top and senior.spec["eval_name"] == "econarena.auction_L_melee.dev.v0"
    args = senior.spec["run_config"]["eval_spec"]["args"]
    assert args["environment"] == "senior" and args["tables_per_player"] == 3
    assert senior.final_report["sessions"] == 3  # five players at five seats: every one at each of 3 tables
    seated = {(r["session"], s["player"]) for r in senior.runs for s in r["seats"]}
    assert seated == {(t, p) for t in range(3) for p in top}

    # the report keeps the senior table apart from the melee: a column of its own, named for it
    both = tmp_path / "both"
    run_cli([cli("econarena-report"), str(melee), str(tmp_path / "senior"), "--out", str(both)], base_env(),
            cwd=tmp_path)
    arena = json.loads((both / "report.json").read_text(encoding="utf-8"))["arena"]
    assert len(arena) == 2
    (column,) = [c for c in arena if "senior" in c]
    assert {p["player"] for p in arena[column]["players"]} == set(top)
    assert {p["player"] for p in arena[next(c for c in arena if c != column)]["players"]} == set(ROSTER)
    # the paper's order, in report.json, report.md and report.html: the melee, then the senior table built
    # from it (the senior column's label sorts first: "vs 4 players" before "vs 6 players")
    melee_column = next(c for c in arena if c != column)
    assert list(arena) == [melee_column, column] and sorted(arena) == [column, melee_column]
    first, then = title(melee_column, arena[melee_column]), title(column, arena[column])  # headings in words
    md = (both / "report.md").read_text(encoding="utf-8")
    assert md.index(f"### {first}") < md.index(f"### {then}")
    page = (both / "report.html").read_text(encoding="utf-8")
    assert page.index(f"<h3>{html.escape(first)}</h3>") < page.index(f"<h3>{html.escape(then)}</h3>")


@pytest.mark.parametrize("content,message", [
    ("{not json", "not JSON"),
    ('{"arena": {}}', "no arena section"),
    ('{"arena": {"x": {"players": [{"player": "a", "rank": "1"}], "log": "x.jsonl"}}}',
     "player 1 has no name or no whole-number rank"),
    ('{"arena": {"x": {"players": [{"player": "a", "rank": 1}], "log": "x.jsonl"}}}', "1 rated player(s)"),
    ('{"arena": {"x": {"players": [{"player": "a", "rank": 1}, {"player": "b", "rank": 2}], "log": "nowhere.jsonl"}}}',
     "cannot be read"),
])
def test_a_bad_report_is_refused_in_one_line_before_any_call(tmp_path, content, message):
    report = tmp_path / "report.json"
    report.write_text(content, encoding="utf-8")
    proc = run_cli([cli("econarena-senior"), str(report), "--out", str(tmp_path / "senior")], base_env(),
                   cwd=tmp_path, returncode=2)
    (line,) = proc.stderr.splitlines()
    assert line.startswith("econarena-senior: ") and message in line
    assert not (tmp_path / "senior").exists()
