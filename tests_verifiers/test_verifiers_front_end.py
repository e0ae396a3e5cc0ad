"""The verifiers front end against the evals plugin, through the real CLIs (``vf-eval``,
``econarena-serve``, ``oaieval``, ``econarena-report``): the same per-session figures for the built-in
players served on 127.0.0.1 and for a deterministic stand-in endpoint, the original environment's
taskset args, the rewards and what the traces hold, and one report over both kinds of log."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from conftest import (
    KEY_VAR,
    VERIFIERS_BIN,
    episodes,
    evals_bin,
    oaieval,
    oaieval_sessions,
    run,
    served,
    vf_eval,
    vf_sessions,
)
from front_ends import METRICS, assert_kept_to_300_a_minute, assert_same_figures
from openai_server import OpenAIServer, RateLimiter, Storm
from policies import scripted


def assert_same_sessions(evals_log: Path, out: Path, cell: str) -> None:
    """Every session's six figures equal under both front ends (to float rounding)."""
    theirs = vf_sessions(out, cell)
    assert not any(s["errored"] for s in theirs.values())
    assert_same_figures(oaieval_sessions(evals_log), theirs, cell)


@pytest.fixture(scope="module")
def nash_runs(tmp_path_factory) -> Path:
    """beauty_L played by econarena/nash under both front ends: vf-eval against the served player."""
    folder = tmp_path_factory.mktemp("nash")
    oaieval("econarena/nash", "beauty_L", folder / "evals" / "beauty_L.jsonl")
    with served("econarena/nash") as base_url:
        vf_eval(base_url, "econarena/nash", folder / "verifiers", "--env.taskset.cells", '["beauty_L"]')
    return folder


def test_nash_scores_0_84_on_every_session_as_oaieval_does(nash_runs):
    sessions = vf_sessions(nash_runs / "verifiers", "beauty_L")
    assert len(sessions) == 20 and {round(s["eas"], 12) for s in sessions.values()} == {0.84}
    assert_same_sessions(nash_runs / "evals" / "beauty_L.jsonl", nash_runs / "verifiers", "beauty_L")
    # the EAS is each seat's reward at weight 1, its parts at weight 0; each seat's own score beside them
    for episode in episodes(nash_runs / "verifiers"):
        assert len(episode["traces"]) == 5
        for trace in episode["traces"]:
            rewards = trace["rewards"]
            assert rewards["eas"] == {"score": 0.84, "weight": 1.0}
            assert {rewards[m]["weight"] for m in METRICS[1:]} == {0.0} and rewards["seat_eas"]["weight"] == 0.0
            assert len(trace["info"]["econarena"]["calls"]) == 10  # one call a run, one interaction a seat


def test_level2_scores_every_session_as_oaieval_does_with_and_without_history(tmp_path):
    cells = ["beauty_L", "beauty_hist"]
    for cell in cells:
        oaieval("econarena/level2", cell, tmp_path / "evals" / f"{cell}.jsonl")
    with served("econarena/level2") as base_url:
        vf_eval(base_url, "econarena/level2", tmp_path / "verifiers", "--env.taskset.cells", json.dumps(cells))
    for cell in cells:
        assert_same_sessions(tmp_path / "evals" / f"{cell}.jsonl", tmp_path / "verifiers", cell)


def test_a_stand_in_endpoint_scores_every_session_as_oaieval_does(tmp_path):
    """The scripted stand-in server (sound play, reasoning blocks, fences, prose, out-of-range answers)
    through oaieval's econarena/chat and vf-eval: the same figures, the same sampling args and seeds."""
    server = OpenAIServer(scripted, models=("gpt-4o",)).start()
    try:
        env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url}
        oaieval("econarena/chat:gpt-4o", "beauty_L", tmp_path / "evals" / "beauty_L.jsonl", env)
        evals_bodies = [body for _, body in server.bodies("gpt-4o")]
        vf_eval(server.base_url, "gpt-4o", tmp_path / "verifiers", "--env.taskset.cells", '["beauty_L"]')
        assert_same_sessions(tmp_path / "evals" / "beauty_L.jsonl", tmp_path / "verifiers", "beauty_L")
        assert all(s["rule_following"] < 1 for s in vf_sessions(tmp_path / "verifiers", "beauty_L").values())
        vf_bodies = [body for _, body in server.bodies("gpt-4o")][len(evals_bodies):]

        def seen(bodies):
            return sorted((b["seed"], b["temperature"], b["max_tokens"], json.dumps(b["messages"])) for b in bodies)

        # every seat call of both front ends: the same 1,000 prompts, sampling args and seeds
        assert len(vf_bodies) == len(evals_bodies) == 1000 and seen(vf_bodies) == seen(evals_bodies)
    finally:
        server.stop()


def test_the_original_environment_s_taskset_args(tmp_path):
    """``{"taskset": {"cells": ["beauty_L"], "seeds": [8], "runs": 2}}`` as vf-eval 0.4.0 takes it: one
    session of two runs; ``seat_reward`` moves the weight to each seat's own score."""
    with served("econarena/nash") as base_url:
        vf_eval(base_url, "econarena/nash", tmp_path / "run", "--env.taskset.cells", '["beauty_L"]',
                "--env.taskset.seeds", "[8]", "--env.taskset.runs", "2", "--env.taskset.seat-reward", "true")
    [episode] = episodes(tmp_path / "run")
    assert episode["ok"] and episode["task"]["data"]["info"]["session"] == 8
    infos = {t["info"]["econarena"]["seat"]: t["info"]["econarena"] for t in episode["traces"]}
    assert sorted(infos) == [1, 2, 3, 4, 5]
    assert [e["run"] for e in infos[1]["runs"]] == [0, 1] and infos[1]["econarena_session"]["eas"] == 0.84
    for trace in episode["traces"]:
        assert trace["rewards"]["eas"]["weight"] == 0.0 and trace["rewards"]["seat_eas"] == {"score": 0.84,
                                                                                            "weight": 1.0}


def test_an_unknown_cell_or_session_is_refused_by_name(tmp_path):
    with served("econarena/nash") as base_url:
        for flags, said in ((["--env.taskset.cells", '["beauty_X"]'], "no cell 'beauty_X'"),
                            (["--env.taskset.cells", '["beauty_L"]', "--env.taskset.seeds", "[20]"], "not [20]")):
            done = run([str(VERIFIERS_BIN / "vf-eval"), "econarena_evals", "-m", "econarena/nash",
                        "--client.base-url", base_url, "--client.api-key-var", KEY_VAR, "--no-push", "--no-rich",
                        "-o", str(tmp_path), *flags])
            assert done.returncode != 0 and said in done.stdout + done.stderr, done.stderr[-3000:]


def test_one_report_over_evals_and_verifiers_logs(nash_runs, tmp_path):
    """econarena-report (the plugin's venv: no verifiers there) over a folder of both kinds of log."""
    folder = tmp_path / "logs"
    shutil.copytree(nash_runs / "evals", folder / "evals")
    shutil.copytree(nash_runs / "verifiers", folder / "verifiers")
    done = run([str(evals_bin() / "econarena-report"), str(folder), "--out", str(tmp_path / "report")])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    rows = {(c["player"].split(" @ ")[0], c["column"]): c for c in report["conditions"]}  # " @ endpoint" served
    assert set(rows) == {("econarena/nash", "beauty_L"), ("econarena/nash (verifiers)", "beauty_L")}
    for row in rows.values():
        assert row["sessions"] == 20 and math.isclose(row["metrics"]["eas"]["mean"], 0.84)
    done = run([str(evals_bin() / "econarena-summary"), str(folder)])
    assert done.returncode == 0 and "econarena/nash (verifiers)" in done.stdout, done.stdout + done.stderr


def test_a_stated_300_requests_a_minute_is_kept_within_1_1_times_the_calls(tmp_path):
    """verifiers' interception hands the harness neither the limits the endpoint states nor a 429's
    wait; the front end hears them from the upstream answer, so its lane paces to them."""
    limiter = RateLimiter(rpm=300)
    server = OpenAIServer(scripted, models=("gpt-4o",), limiter=limiter).start()
    try:
        vf_eval(server.base_url, "gpt-4o", tmp_path, "--env.taskset.cells", '["beauty_L"]',
                "--env.taskset.seeds", "[0, 1]")
        assert len(vf_sessions(tmp_path, "beauty_L")) == 2
        assert_kept_to_300_a_minute(limiter, 2)
    finally:
        server.stop()


def test_an_opponent_cell_seats_the_registry_s_players_as_oaieval_does(tmp_path):
    """beauty_L_vs_humans: the model in its rotating seat, econarena/human (seeded, random) in the others."""
    oaieval("econarena/nash", "beauty_L_vs_humans", tmp_path / "evals.jsonl")
    with served("econarena/nash") as base_url:
        vf_eval(base_url, "econarena/nash", tmp_path / "verifiers", "--env.taskset.cells", '["beauty_L_vs_humans"]')
    ours = oaieval_sessions(tmp_path / "evals.jsonl")
    theirs = vf_sessions(tmp_path / "verifiers", "beauty_L_vs_humans")
    assert sorted(ours) == sorted(theirs) and len(ours) == 20
    for session, event in ours.items():
        figures = [k for k in event if k.split("/")[0] in METRICS]
        assert any("/econarena/human" in k for k in figures)  # the opponents' figures too
        for key in figures:
            assert math.isclose(event[key], theirs[session][key], abs_tol=1e-12), (session, key)
    # one interaction: the model's one seat
    assert {len(e["traces"]) for e in episodes(tmp_path / "verifiers")} == {1}


def test_an_endpoint_answering_529_for_60_s_loses_no_session(tmp_path):
    storm = Storm(after_s=0.3, for_s=60.0, shape="anthropic")
    server = OpenAIServer(scripted, models=("gpt-4o",), answer=storm).start()
    try:
        vf_eval(server.base_url, "gpt-4o", tmp_path, "--env.taskset.cells", '["beauty_L"]',
                "--env.taskset.seeds", "[0, 1]")
    finally:
        server.stop()
    print(f"529 for 60 s: {storm.refused} refused, {len(server.requests)} requests")
    assert storm.refused > 0 and len(vf_sessions(tmp_path, "beauty_L")) == 2
