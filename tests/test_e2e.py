"""End to end: the real oaieval / oaievalset CLIs, the real openai client, a real HTTP server.

Every log is re-scored from its econarena_run events and compared with what the eval recorded.
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from econarena_evals.log.evallog import EvalLog, read_log
from econarena_evals.log.filing import filing_problems
from econarena_evals.score.metrics import METRICS

from conftest import CELLS, EVALS_LOGS, REGISTRY, base_env, cli, run_cli, take_evals_log

pytestmark = pytest.mark.e2e  # every test here starts a process or a server


def oaieval(completion_fn: str, cell: str, env: dict, log: Path, *extra: str) -> EvalLog:
    run_cli([cli("oaieval"), completion_fn, f"econarena.{cell}", "--registry_path", str(REGISTRY),
             "--record_path", str(log), *extra], env)
    return read_log(log)


def sampling_events(log: EvalLog) -> list[dict]:
    rows = [json.loads(line) for line in log.path.read_text().splitlines() if line.strip()]
    return [r for r in rows if r.get("type") == "sampling"]


def assert_rescores(log: EvalLog) -> None:
    """Session metrics and the final report, recomputed from run events alone, match the log; and
    every finished session's seat calls are filed under it, one per (run, seat). (The reader derives
    every figure from the run events and names each logged one that differs in ``forged``.)"""
    assert log.forged == []
    assert filing_problems(log.path) == []
    per_session, report = log.rescore()
    assert log.final_report is not None
    for key, value in report.items():
        assert log.final_report[key] == value, key
    assert per_session
    for event in log.sessions:
        mine = per_session[event["session"]]
        assert mine is not None
        for metric in METRICS:
            assert event[metric] == mine[log.players[0]][metric]


@pytest.mark.parametrize("cell", CELLS + ("fpauction_L",))
def test_gpt4_through_local_endpoint_every_cell(cell, model_env, server, tmp_path):
    before = len(server.paths())
    log = oaieval("gpt-4", cell, model_env, tmp_path / "log.jsonl", "--max_samples", "3")
    assert not log.problems
    report = log.final_report
    assert report["sessions"] == 3 and report["errored_sessions"] == 0
    assert list(report)[0] == "eas"
    # the scripted policy breaks rules on purpose: prose, and an out-of-range number
    assert 0 < report["rule_following"] < 1
    assert len(log.runs) == 3 * 10
    # every seat call went to the chat endpoint, and left a sampling event with flat usage
    calls = server.paths()[before:]
    assert len(calls) == 3 * 10 * 5 and all(p.endswith("/chat/completions") for p in calls)
    assert len(sampling_events(log)) == 3 * 10 * 5
    # nested usage objects from the server did not stop the final report; their parts were summed
    assert report["usage_completion_tokens_details_reasoning_tokens"] == 0
    assert report["usage_prompt_tokens"] > 0
    assert_rescores(log)
    if cell == "beauty_hist":
        assert [r["history_runs"] for r in log.runs if r["session"] == log.runs[0]["session"]] == [
            0, 1, 2, 3, 3, 3, 3, 3, 3, 3]


def oaievalset_logs(player: str, eval_set: str, env: dict, dest: Path, timeout: float = 600) -> list[EvalLog]:
    """Run oaievalset (it cannot choose log paths, so they land in /tmp/evallogs) and return the logs
    of this run only: a unique --user, passed on to every oaieval, marks them as ours even when
    another process writes logs there at the same time. Our logs are moved to ``dest``, and
    oaievalset's progress file for (player, set) is put back as it was: a test leaves a user's
    /tmp/evallogs and /tmp/oaievalset as it found them."""
    tag = f"econarena-test-{uuid.uuid4().hex}"
    progress = Path(f"/tmp/oaievalset/{player}.{eval_set}.progress.txt")
    saved = progress.read_bytes() if progress.exists() else None
    try:
        run_cli([cli("oaievalset"), player, eval_set, "--registry_path", str(REGISTRY), "--no-resume",
                 "--user", tag], env, timeout=timeout)
    finally:
        if saved is not None:
            progress.write_bytes(saved)
        elif progress.exists():
            progress.unlink()
    logs = []
    for path in sorted(EVALS_LOGS.rglob("*.jsonl")):
        with open(path, encoding="utf-8", errors="replace") as f:
            first = f.readline()
        if tag in first:
            take_evals_log(path, dest / path.name)
            logs.append(read_log(dest / path.name))
    return logs


def test_oaievalset_nash_is_exactly_rational_in_every_cell(tmp_path):
    """Every cell of econarena-full, first-price ones included; opponent cells differ by design."""
    env = base_env()  # no API key, no endpoint: the built-in player is offline
    logs = oaievalset_logs("econarena/nash", "econarena-full", env, tmp_path)
    self_play = [lg for lg in logs if "_vs_" not in lg.cell]
    assert set(CELLS) | {"fpauction_L", "fpauction_hist"} <= {lg.cell for lg in self_play}
    assert len(logs) == 15 and len(self_play) == 10
    for log in logs:
        assert not log.problems
        r = log.final_report
        assert r["sessions"] == 20 and r["errored_sessions"] == 0
        assert_rescores(log)
        if log in self_play:
            assert (r["rationality"], r["ne_proximity"], r["rule_following"], r["convergence"]) == (1, 1, 1, 1)
            assert r["win_rate"] == 0.2 and r["eas"] == 0.84, log.cell
            assert len(sampling_events(log)) == 20 * 10 * 5  # the built-in player records like any fn


def test_random_player_is_reproducible_and_runs_differ(tmp_path):
    env = base_env()
    a = oaieval("econarena/random", "beauty_hist", env, tmp_path / "a.jsonl", "--max_samples", "4")
    b = oaieval("econarena/random", "beauty_hist", env, tmp_path / "b.jsonl", "--max_samples", "4")
    c = oaieval("econarena/random", "beauty_hist", env, tmp_path / "c.jsonl", "--max_samples", "4", "--seed", "7")
    assert json.dumps(a.final_report, sort_keys=True) == json.dumps(b.final_report, sort_keys=True)

    def actions(log: EvalLog) -> dict:
        return {(r["session"], r["run"]): [s["action"] for s in r["seats"]] for r in log.runs}

    assert actions(a) == actions(b)
    assert actions(a) != actions(c)
    for session in {s for s, _ in actions(a)}:
        per_run = [tuple(v) for (s, _), v in sorted(actions(a).items()) if s == session]
        assert len(set(per_run)) == len(per_run)  # no run is a copy of another
    assert_rescores(a)


def test_installed_package_needs_no_registry_path(tmp_path):
    """After `pip install .`, stock oaieval finds the cells and players by itself."""
    env = base_env(source=False)
    log_path = tmp_path / "log.jsonl"
    run_cli([cli("oaieval"), "econarena/nash", "econarena.beauty_L", "--record_path", str(log_path),
             "--max_samples", "2"], env, cwd=tmp_path)
    log = read_log(log_path)
    assert log.final_report["eas"] == 0.84 and log.final_report["sessions"] == 2


def test_registry_path_and_installed_package_together_are_not_duplicates(tmp_path):
    env = base_env(source=False)
    log_path = tmp_path / "log.jsonl"
    run_cli([cli("oaieval"), "econarena/nash", "econarena.auction_L", "--registry_path", str(REGISTRY),
             "--record_path", str(log_path), "--max_samples", "2"], env, cwd=tmp_path)
    log = read_log(log_path)
    assert log.final_report["eas"] == 0.84
    assert log.spec["run_config"]["eval_spec"]["registry_path"] == str(REGISTRY)


def test_one_call_at_a_time_gives_the_same_results_as_concurrent(model_env, tmp_path):
    """Concurrency changes timing only: the capped run (env var) and the default run agree."""
    concurrent = oaieval("gpt-4", "beauty_hist", model_env, tmp_path / "a.jsonl", "--max_samples", "2")
    serial_env = model_env | {"ECONARENA_MAX_CONCURRENCY": "1", "EVALS_THREADS": "1"}
    serial = oaieval("gpt-4", "beauty_hist", serial_env, tmp_path / "b.jsonl", "--max_samples", "2")

    def runs(log: EvalLog) -> list:
        return sorted((r["session"], r["run"], json.dumps(r["seats"])) for r in log.runs)

    assert runs(concurrent) == runs(serial)
    assert {k: v for k, v in concurrent.final_report.items() if not k.startswith("usage")} == {
        k: v for k, v in serial.final_report.items() if not k.startswith("usage")}
