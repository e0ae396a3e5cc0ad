"""A melee through the real ``oaieval``: the roster is the completion fns, one sample is one table of
the schedule, every seat is evaluated, the log files every seat call under its table, and a resume
copies the tables a stopped run finished."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Optional

import pytest

from econarena_evals.core.schedule import table_count
from econarena_evals.log.evallog import read_log
from econarena_evals.log.filing import filing_problems
from econarena_evals.log.format import RESUMED_FROM, RUN_EVENT, SEAT_TAG, SESSION_EVENT, metric_key

from conftest import ERRORED, base_env, cli, dead_endpoint, run_cli

pytestmark = pytest.mark.e2e

ROSTER = ["econarena/nash", "econarena/random", "econarena/level1", "econarena/level2", "econarena/human",
          "econarena/ch", "econarena/overbid"]
PER_PLAYER = 3
TABLES = table_count(len(ROSTER), 5, PER_PLAYER)  # 5 tables of 5 seats


def play(tmp_path: Path, name: str, roster=ROSTER, *extra: str, params: str = "", plan: Optional[list] = None) -> Path:
    log = tmp_path / f"{name}.jsonl"
    proc = run_cli([cli("oaieval"), ",".join(roster), "econarena.beauty_L_melee", "--record_path", str(log),
                    "--extra_eval_params", f"tables_per_player={PER_PLAYER}{params}", *extra], base_env(), cwd=tmp_path)
    if plan is not None:  # the run's plan lines
        plan += [x for x in proc.stderr.splitlines() if "econarena: plan:" in x]
    return log


def rows(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_a_melee_seats_the_whole_roster_and_evaluates_every_seat(tmp_path):
    plan: list[str] = []
    log = play(tmp_path, "melee", plan=plan)
    # before the first call: the schedule's size and each player's calls (4 players at 4 tables, 3 at 3);
    # built-in players send nothing, so nothing is reserved for them
    said = "\n".join(plan)
    assert (f"melee of 7 players at {TABLES} tables of 5 seats, 10 runs a table: {TABLES * 50} seat calls, 0 sent by "
            f"0 models, {TABLES * 50} answered by 7 built-in players (no request, no cost)") in said
    assert "built-in players, answered in process: 4 of them: 40 calls at 4 tables each; " in said
    assert "no request to send" in said and "reserve" not in said
    assert filing_problems(log) == []
    events = rows(log)
    sessions = [e["data"] for e in events if e.get("type") == SESSION_EVENT]
    assert sorted(s["session"] for s in sessions) == list(range(TABLES)) and not any(s["errored"] for s in sessions)
    runs = [e["data"] for e in events if e.get("type") == RUN_EVENT]
    seated = {(r["session"], r["run"], s["seat"]): s["player"] for r in runs for s in r["seats"]}
    # every sampling event is tagged with its table, run, seat and the player the run event seats there
    tags = [e["data"][SEAT_TAG] for e in events if e.get("type") == "sampling"]
    assert len(tags) == len(seated) == TABLES * 10 * 5
    assert all(seated[(t["session"], t["run"], t["seat"])] == t["player"] for t in tags)
    # the plan's balance line says what the log's tables hold: each pair's meetings from its seating
    at_table = {}
    for (table, _, _), player in seated.items():
        at_table.setdefault(table, set()).add(player)
    names = sorted({p for ps in at_table.values() for p in ps})
    meetings = [sum(a in ps and b in ps for ps in at_table.values()) for i, a in enumerate(names) for b in names[i + 1:]]
    (balance,) = [x for x in plan if ": schedule: " in x]
    assert f"pairs meet {min(meetings)}-{max(meetings)} times (mean {sum(meetings) / len(meetings):.2f}; " in balance
    tables_of = Counter(p for (table, run, _), p in seated.items() if run == 0)
    assert set(tables_of) == set(ROSTER) and max(tables_of.values()) - min(tables_of.values()) <= 1
    # each table's session event holds the metrics of every player that sat there, and only theirs
    for s in sessions:
        at_table = {p for (table, _, _), p in seated.items() if table == s["session"]}
        assert {p for p in ROSTER if s[metric_key("eas", p, ROSTER)] is not None} == at_table
    report = read_log(log).final_report
    assert report["sessions"] == TABLES and all(report[metric_key("eas", p, ROSTER)] is not None for p in ROSTER)
    # win rates at mixed tables are no longer 1/seats by construction
    assert len({round(report[metric_key("win_rate", p, ROSTER)], 6) for p in ROSTER}) > 2


def test_the_roster_s_order_changes_nothing(tmp_path):
    first = read_log(play(tmp_path, "first")).final_report
    again = read_log(play(tmp_path, "again", list(reversed(ROSTER)))).final_report
    back = list(reversed(ROSTER))
    for p in ROSTER:
        for metric in ("eas", "win_rate", "rationality"):
            assert first[metric_key(metric, p, ROSTER)] == again[metric_key(metric, p, back)]


def test_a_resume_copies_the_tables_a_run_finished(tmp_path):
    part = play(tmp_path, "part", ROSTER, "--max_samples", "2")
    assert read_log(part).final_report["sessions"] == 2
    whole = play(tmp_path, "whole", params=f",resume_from={part}")
    copied = [e for e in rows(whole) if e.get("type") == SESSION_EVENT and RESUMED_FROM in e["data"]]
    assert len(copied) == 2
    assert filing_problems(whole) == []
    fresh = read_log(play(tmp_path, "fresh")).final_report
    assert read_log(whole).final_report == fresh


def test_a_melee_needs_two_players_and_takes_no_opponents(tmp_path):
    proc = run_cli([cli("oaieval"), "econarena/nash", "econarena.beauty_L_melee", "--record_path",
                    str(tmp_path / "one.jsonl")], base_env(), cwd=tmp_path, returncode=2)
    assert "a melee needs a roster of at least 2 completion fns" in proc.stderr
    proc = run_cli([cli("oaieval"), "econarena/nash", "econarena.beauty_L", "--record_path", str(tmp_path / "x.jsonl"),
                    "--extra_eval_params", "tables_per_player=3"], base_env(), cwd=tmp_path, returncode=2)
    assert "tables_per_player is a melee's" in proc.stderr
    # one player named twice is no roster of two (econarena-plan refuses it the same way), and no log is left
    proc = run_cli([cli("oaieval"), "econarena/nash,econarena/nash,econarena/random", "econarena.beauty_L_melee",
                    "--record_path", str(tmp_path / "twice.jsonl")], base_env(), cwd=tmp_path, returncode=2)
    assert "econarena: the roster names a player twice: ['econarena/nash']" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "twice.jsonl").exists()


def test_the_inspect_front_end_lists_no_melee_cell():
    """A melee's roster is an oaieval run's completion fns; the inspect front end plays one model."""
    from econarena_evals.on_inspect.cells import cells

    listed = cells()
    assert "beauty_L" in listed and not any(c.endswith("_melee") for c in listed)


def test_a_player_whose_endpoint_is_down_errors_its_own_tables_and_the_rest_go_on(tmp_path):
    roster = ROSTER + ["econarena/chat:gpt-4"]  # 8 players, 4 tables each: 7 tables, 4 of them with the dead one
    log = tmp_path / "dead.jsonl"
    proc = run_cli([cli("oaieval"), ",".join(roster), "econarena.beauty_L_melee", "--record_path", str(log),
                    "--extra_eval_params", "tables_per_player=4,max_attempts=1"], dead_endpoint(base_env()),
                   cwd=tmp_path, returncode=ERRORED)
    sessions = [e["data"] for e in rows(log) if e.get("type") == SESSION_EVENT]
    runs = [e["data"] for e in rows(log) if e.get("type") == RUN_EVENT]
    seated = {(r["session"], s["player"]) for r in runs for s in r["seats"]}
    errored = [s for s in sessions if s["errored"]]
    assert errored and all("(econarena/chat:gpt-4)" in s["error"] for s in errored)  # named
    finished = [s["session"] for s in sessions if not s["errored"]]
    assert finished and not any((t, "econarena/chat:gpt-4") in seated for t in finished)
    assert "econarena/chat:gpt-4" in proc.stderr
    out = tmp_path / "report"
    run_cli([cli("econarena-report"), str(log), "--out", str(out)], base_env(), cwd=tmp_path)
    (entry,) = json.loads((out / "report.json").read_text(encoding="utf-8"))["arena"].values()
    at_finished = {p for t, p in seated if t in finished}
    assert entry["unrated"] == [p for p in roster if p not in at_finished] and "econarena/chat:gpt-4" in entry["unrated"]
    assert entry["errored_tables"] == len(errored)
    assert entry["tables"] == len(finished) and {p["player"] for p in entry["players"]} <= set(ROSTER)


def test_a_tournament_played_again_on_a_fixed_endpoint_is_the_one_rated(tmp_path, model_env):
    """The model's endpoint was down, then fixed (another address: another condition in the same
    column): the report rates the tournament with the finished tables and names the other, whichever
    log it reads last (it rated the errored one and hid the finished one)."""
    roster = ["econarena/chat:gpt-4"] + ROSTER
    dead, live = tmp_path / "a-dead.jsonl", tmp_path / "b-live.jsonl"
    args = ["econarena.beauty_L_melee", "--extra_eval_params", "tables_per_player=2,max_attempts=1"]
    run_cli([cli("oaieval"), ",".join(roster), *args, "--record_path", str(dead)], dead_endpoint(base_env()),
            cwd=tmp_path, returncode=ERRORED)
    run_cli([cli("oaieval"), ",".join(roster), *args, "--record_path", str(live)], model_env, cwd=tmp_path)
    for order in ((dead, live), (live, dead)):
        out = tmp_path / f"report-{order[0].stem}"
        run_cli([cli("econarena-report"), *map(str, order), "--out", str(out)], base_env(), cwd=tmp_path)
        (entry,) = json.loads((out / "report.json").read_text(encoding="utf-8"))["arena"].values()
        assert entry["log"] == str(live) and entry["errored_tables"] == 0 and not entry["unrated"]
        assert entry["tables"] == table_count(len(roster), 5, 2) and len(entry["players"]) == len(roster)
        assert len(entry["left_out"]) == 1 and entry["left_out"][0].startswith(str(dead))
    summary = run_cli([cli("econarena-summary"), str(dead), str(live)], base_env(), cwd=tmp_path).stdout
    assert f"another tournament of this column, with fewer finished tables, is left out: {dead}" in summary


def test_the_plan_says_each_model_s_own_calls_and_cost(tmp_path, model_env):
    """A model among built-in players: the plan names its calls (those the log then holds from it),
    its tokens and what it reserves; the built-in players are counted apart and reserve nothing."""
    roster = ["econarena/chat:gpt-4", "econarena/nash", "econarena/random", "econarena/overbid", "econarena/human",
              "econarena/ch"]
    log = tmp_path / "mixed.jsonl"
    proc = run_cli([cli("oaieval"), ",".join(roster), "econarena.auction_L_melee", "--record_path", str(log),
                    "--extra_eval_params", "tables_per_player=2,max_tokens=100"], model_env, cwd=tmp_path)
    plan = [x.split(": ", 3)[3] for x in proc.stderr.splitlines() if "econarena: plan:" in x]
    tags = [e["data"][SEAT_TAG] for e in rows(log) if e.get("type") == "sampling"]
    sent = sum(t["player"] == "econarena/chat:gpt-4" for t in tags)
    tables = len({t["session"] for t in tags if t["player"] == "econarena/chat:gpt-4"})
    total = table_count(len(roster), 5, 2) * 50
    assert sent == 10 * tables and len(tags) == total  # one seat a table, 10 runs
    assert f"{total} seat calls, {sent} sent by 1 model, {total - sent} answered by 5 built-in players" in plan[1]
    (line,) = [x for x in plan if x.startswith("econarena/chat:gpt-4: ")]
    assert line.startswith(f"econarena/chat:gpt-4: {sent} seat calls to send at {tables} tables; prompts ~")
    assert f"completions reserve up to {sent * 100:,} tokens" in line
    # the run's first line: what goes out, the model's calls alone
    assert plan[0].startswith(f"{sent} seat calls (") and f"reserve up to {sent * 100:,} tokens" in plan[0]
    assert f"(and {total - sent} of built-in players, which send no request)" in plan[0]
    # econarena-plan, before any run, says the same of the same roster (the same schedule), and prices it
    before = run_cli([cli("econarena-plan"), ",".join(reversed(roster)), "econarena.auction_L_melee",
                      "--tables_per_player", "2", "--max_tokens", "100", "--price-in", "1", "--price-out", "2"],
                     base_env()).stdout.splitlines()
    assert before[0] == f"econarena.auction_L_melee.dev.v0: {plan[1]}"
    (priced,) = [x for x in before if ": econarena/chat:gpt-4: " in x]
    assert priced.startswith(f"econarena.auction_L_melee.dev.v0: {line}; cost ~")
    assert before[-1].startswith("cost: prompts ~")
    refused = run_cli([cli("econarena-plan"), "econarena/nash,econarena/random", "econarena.auction_L"], base_env(),
                      returncode=2)
    assert refused.stderr.strip() == ("econarena-plan: econarena.auction_L is played by one model; a roster of 2 "
                                      "plays melee cells")
