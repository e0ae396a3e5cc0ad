"""A game is its module, its registry entries and its samples: a public-goods game written outside
the package (``toy_game``), played under the real ``oaieval`` with ``--registry_path`` and no edit
anywhere in the package. Its inspect side is in ``tests_inspect/``."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from econarena_evals.games import GAMES

from conftest import ROOT, base_env, cli, run_cli
from toy_game import GAME, SESSIONS, samples, with_path, write_toy_game

pytestmark = pytest.mark.e2e  # starts oaieval


def rows(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]


def play(tmp_path: Path, player: str, *extra: str) -> tuple[list[dict], list[dict]]:
    env = base_env()
    code, registry = write_toy_game(tmp_path, env=env)
    env["PYTHONPATH"] = with_path(code, env)
    log = tmp_path / "log.jsonl"
    run_cli([cli("oaieval"), player, f"econarena.{GAME}", "--registry_path", str(registry), "--record_path", str(log),
             *extra], env)
    return rows(log), samples(registry)


def test_nash_play_of_a_game_from_a_temporary_folder_scores_as_the_contract_says(tmp_path):
    log, drawn = play(tmp_path, "econarena/nash", "--max_samples", "3")
    assert len(drawn) == SESSIONS and GAME not in GAMES  # the package itself knows no such game
    assert not list((ROOT / "econarena_evals").rglob(f"{GAME}*"))
    report = next(r["final_report"] for r in log if "final_report" in r)
    # contributing nothing is the equilibrium: every part 1 but win_rate, which all five seats tie for
    assert (report["sessions"], report["errored_sessions"], report["eas"]) == (3, 0, 0.84)
    assert (report["rationality"], report["ne_proximity"], report["win_rate"]) == (1, 1, 0.2)
    runs = [r["data"] for r in log if r.get("type") == "econarena_run"]
    assert len(runs) == 3 * 4 and {r["game"] for r in runs} == {GAME}
    endowments = {s["session"]: s["endowment"] for s in drawn}
    assert all(r["endowment"] == endowments[r["session"]] and r["pot"] == 0 for r in runs)
    calls = [r["data"] for r in log if r.get("type") == "sampling"]
    # each seat call is filed by its tag, once per (session, run, seat), and its prompt is the game's own
    tags = sorted((c["econarena"]["session"], c["econarena"]["run"], c["econarena"]["seat"]) for c in calls)
    assert tags == sorted({(r["session"], r["run"], s) for r in runs for s in range(1, 6)})
    assert all("public-goods game" in c["prompt"][1]["content"] for c in calls)


def test_a_game_that_keeps_something_back_scores_below_the_equilibrium(tmp_path):
    """The reference players of the outside game play through the package's players: the human
    type gives 40 % and is scored below 1 by the game's own scorer."""
    log, _ = play(tmp_path, "econarena/human", "--max_samples", "2")
    report = next(r["final_report"] for r in log if "final_report" in r)
    assert report["sessions"] == 2 and report["rule_following"] == 1
    assert report["ne_proximity"] == pytest.approx(0.6) and report["eas"] < 0.84
    runs = [r["data"] for r in log if r.get("type") == "econarena_run"]
    assert all(r["pot"] == pytest.approx(5 * 0.4 * r["endowment"]) for r in runs)


def test_a_game_module_that_is_no_game_is_refused_in_one_line(tmp_path):
    env = base_env()
    code, registry = write_toy_game(tmp_path, env=env)
    (code / "not_a_game.py").write_text("NAME = 'not_a_game'\n", encoding="utf-8")
    env["PYTHONPATH"] = with_path(code, env)
    proc = run_cli([cli("oaieval"), "econarena/nash", f"econarena.{GAME}", "--registry_path", str(registry),
                    "--record_path", str(tmp_path / "log.jsonl"), "--extra_eval_params", "game=not_a_game"],
                   env, returncode=2)
    assert "module not_a_game is no game: it lacks Params" in proc.stderr
