"""The inspect front end against the evals plugin, through both real CLIs: the same per-session
figures for the built-in players and a deterministic stand-in endpoint, a stated rate limit kept,
a quota stop in one line, and one report over both kinds of log."""
from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest

from econarena_evals.log.format import SESSION_EVENT

from conftest import evals_bin, inspect_eval, inspect_sessions, oaieval, oaieval_sessions, run
from front_ends import METRICS, assert_kept_to_300_a_minute, assert_same_figures
from openai_server import OpenAIServer, RateLimiter
from policies import scripted

STAND_IN_ENV = {"OPENAI_API_KEY": "sk-test"}


def assert_same_sessions(evals_log: Path, log_dir: Path, cell: str) -> None:
    """Every session's six figures equal under both front ends (to float rounding)."""
    assert_same_figures(oaieval_sessions(evals_log), inspect_sessions(log_dir, cell), cell)


@pytest.fixture(scope="module")
def nash_logs(tmp_path_factory) -> Path:
    """beauty_L played by econarena/nash under both front ends, the inspect log as .eval and as .json."""
    folder = tmp_path_factory.mktemp("nash")
    oaieval("econarena/nash", "beauty_L", folder / "evals" / "beauty_L.jsonl")
    done = inspect_eval(["beauty_L"], "econarena/nash", folder / "inspect")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    done = inspect_eval(["beauty_L"], "econarena/nash", folder / "inspect_json", "--log-format", "json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return folder


def test_nash_scores_0_84_on_every_session_as_oaieval_does(nash_logs):
    figures = inspect_sessions(nash_logs / "inspect", "beauty_L")
    assert len(figures) == 20 and {round(f["eas"], 12) for f in figures.values()} == {0.84}
    assert_same_sessions(nash_logs / "evals" / "beauty_L.jsonl", nash_logs / "inspect", "beauty_L")


def test_built_in_players_score_every_session_as_oaieval_does(tmp_path):
    """A player with randomness (human: its seeds and rng), history (beauty_hist), an opponent cell."""
    played = (("econarena/human", ["beauty_L", "beauty_hist"]), ("econarena/level2", ["beauty_L_vs_humans"]))
    for model, cells in played:
        done = inspect_eval(cells, model, tmp_path / model)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        for cell in cells:
            oaieval(model, cell, tmp_path / "evals" / model / f"{cell}.jsonl")
            assert_same_sessions(tmp_path / "evals" / model / f"{cell}.jsonl", tmp_path / model, cell)
    # the randomness is real: the human player's sessions differ from one another
    figures = inspect_sessions(tmp_path / "econarena/human", "beauty_L")
    assert len({round(f["eas"], 9) for f in figures.values()}) > 5


def test_an_arena_by_model_roles_scores_and_reports_as_oaieval_s_arena(tmp_path):
    """``--model-role player2=B`` seats B as ``oaieval A,B`` does: every player's figures per session
    equal, and the summary puts both runs in one column, one row each."""
    done = inspect_eval(["beauty_L"], "econarena/level2", tmp_path / "inspect", "--model-role",
                        "player2=econarena/nash")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    oaieval("econarena/level2,econarena/nash", "beauty_L", tmp_path / "evals" / "arena.jsonl")
    from inspect_ai.log import list_eval_logs, read_eval_log

    [log] = [read_eval_log(info) for info in list_eval_logs(str(tmp_path / "inspect"))]
    theirs = {int(s.id): s.store[SESSION_EVENT] for s in log.samples}
    ours = oaieval_sessions(tmp_path / "evals" / "arena.jsonl")
    assert sorted(ours) == sorted(theirs) and len(ours) == 20
    for session, event in ours.items():
        keys = [k for k in event if k.split("/")[0] in METRICS]
        assert "eas/econarena/nash" in keys
        for key in keys:
            assert math.isclose(event[key], theirs[session][key], abs_tol=1e-12), (session, key)
    done = run([str(evals_bin() / "econarena-summary"), str(tmp_path)])
    rows = [line.split("  ")[0] for line in done.stdout.splitlines() if "beauty_L (vs econarena/nash)" in line]
    assert rows == ["econarena/level2", "econarena/level2 (inspect)"], done.stdout


def test_a_stand_in_endpoint_scores_every_session_as_oaieval_does(tmp_path):
    """The scripted stand-in server (sound play, reasoning blocks, fences, prose, out-of-range
    answers) through oaieval's econarena/chat, inspect's own OpenAI provider, and econarena/chat/."""
    server = OpenAIServer(scripted, models=("gpt-4o",)).start()
    try:
        env = {**STAND_IN_ENV, "OPENAI_BASE_URL": server.base_url}
        cells = ["beauty_L", "beauty_hist"]
        for cell in cells:
            oaieval("econarena/chat:gpt-4o", cell, tmp_path / "evals" / f"{cell}.jsonl", env)
        for model in ("openai/gpt-4o", "econarena/chat/gpt-4o"):
            done = inspect_eval(cells, model, tmp_path / model, env=env)
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            for cell in cells:
                assert_same_sessions(tmp_path / "evals" / f"{cell}.jsonl", tmp_path / model, cell)
        # the scripted answers break rules: the figures compared are not all the same number
        figures = inspect_sessions(tmp_path / "econarena/chat/gpt-4o", "beauty_L")
        assert all(f["rule_following"] < 1 for f in figures.values())
        # every request carried the plugin's sampling args and a per-seat seed
        bodies = [body for _, body in server.bodies("gpt-4o")]
        assert {(b.get("temperature"), b.get("max_tokens")) for b in bodies} == {(0.7, 1024)}
        assert len({b["seed"] for b in bodies}) > 900
    finally:
        server.stop()


def test_a_stated_300_requests_a_minute_is_kept_within_1_1_times_the_calls(tmp_path):
    limiter = RateLimiter(rpm=300)
    server = OpenAIServer(scripted, models=("gpt-4o",), limiter=limiter).start()
    try:
        env = {**STAND_IN_ENV, "OPENAI_BASE_URL": server.base_url}
        done = inspect_eval(["beauty_L"], "econarena/chat/gpt-4o", tmp_path, "--limit", "2", env=env)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert len(inspect_sessions(tmp_path, "beauty_L")) == 2
        assert_kept_to_300_a_minute(limiter, 2)
    finally:
        server.stop()


def test_a_used_up_quota_stops_the_run_in_one_line(tmp_path):
    limiter = RateLimiter(quota_requests=30)
    server = OpenAIServer(scripted, models=("gpt-4o",), limiter=limiter).start()
    try:
        env = {**STAND_IN_ENV, "OPENAI_BASE_URL": server.base_url}
        done = inspect_eval(["beauty_L"], "econarena/chat/gpt-4o", tmp_path, env=env)
        # `inspect eval` exits 0 whatever its tasks' status (inspect's own rule); the log says "error"
        from inspect_ai.log import list_eval_logs, read_eval_log

        logs = [read_eval_log(info, header_only=True) for info in list_eval_logs(str(tmp_path))]
        assert [log.status for log in logs] == ["error"] and "quota" in logs[0].error.message
        said = [line for line in done.stderr.splitlines() if line.startswith("econarena: stopped:")]
        assert len(said) == 1 and "quota" in said[0], done.stderr[-3000:]
        # no request after the first refusal but those already on the wire
        after = limiter.count - limiter.first_quota_refusal
        print(f"quota after 30 answers: {limiter.count} requests, {after} after the first refusal")
        assert limiter.answered == 30 and after < 64
    finally:
        server.stop()
    # the log says the run stopped, and why
    done = run([str(evals_bin() / "econarena-summary"), str(tmp_path)])
    assert "stopped: error" in done.stdout, done.stdout + done.stderr


def test_one_report_over_evals_and_inspect_logs(nash_logs, tmp_path):
    """econarena-report (the plugin's venv: no inspect_ai there) over a folder of both kinds of log."""
    folder = tmp_path / "logs"
    shutil.copytree(nash_logs / "evals", folder / "evals")
    shutil.copytree(nash_logs / "inspect_json", folder / "inspect")
    eval_log = next((nash_logs / "inspect").glob("*.eval"))
    shutil.copy(eval_log, folder / "inspect" / eval_log.name)
    done = run([str(evals_bin() / "econarena-report"), str(folder), "--out", str(tmp_path / "report")])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    rows = {(c["player"], c["column"]): c for c in report["conditions"]}
    assert set(rows) == {("econarena/nash", "beauty_L"), ("econarena/nash (inspect)", "beauty_L")}
    for row in rows.values():
        assert row["sessions"] == 20 and math.isclose(row["metrics"]["eas"]["mean"], 0.84)
    # both inspect logs were read; the newer one is used, the other listed with its reason
    inputs = {Path(i["file"]).suffix: i for i in report["inputs"]}
    assert set(inputs) >= {".jsonl", ".eval", ".json"}
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert re.search(r"econarena/nash \(inspect\)", markdown)
