"""Every seat call's sampling event is filed under its own session, read back from real logs.

Run where slots pass between sessions all the time (a low ``max_concurrency``), at the default
cap and ``EVALS_THREADS``, with in-process players, ``econarena/chat``, evals' own ``gpt-4`` fn and
a fn of the user's that records nothing itself.
"""
from __future__ import annotations

import json
from collections import Counter

import pytest
from test_e2e import assert_rescores, oaieval

from econarena_evals.log.evallog import read_log
from econarena_evals.log.filing import filing_problems, read_sessions

from conftest import REGISTRY, base_env, cli, run_cli, users_fn

pytestmark = pytest.mark.e2e


def assert_filed(log, sessions: int) -> None:
    assert filing_problems(log.path) == []
    read = read_sessions(log.path)
    assert len(read.finished) == sessions
    per_session = Counter(c.sample_id for c in read.calls)
    assert sorted(per_session.values()) == [50] * sessions  # 10 runs x 5 seats, no more, no fewer


def test_a_whole_dev_cell_at_a_low_cap(tmp_path):
    log = oaieval("econarena/random", "beauty_L", base_env(), tmp_path / "log.jsonl",
                  "--extra_eval_params", "max_concurrency=7")
    assert_filed(log, 20)
    assert_rescores(log)


def test_two_sessions_of_a_built_in_player(tmp_path):
    log = oaieval("econarena/nash", "beauty_L", base_env(), tmp_path / "log.jsonl", "--max_samples", "2")
    assert_filed(log, 2)


def test_chat_fn_at_a_cap_that_splits_waves(model_env, tmp_path):
    log = oaieval("econarena/chat", "auction_L", model_env, tmp_path / "log.jsonl", "--completion_args",
                  "model=gpt-4", "--max_samples", "8", "--extra_eval_params", "max_concurrency=13")
    assert_filed(log, 8)


def test_evals_own_gpt4_fn_at_the_default_cap(model_env, tmp_path):
    log = oaieval("gpt-4", "beauty_hist", model_env, tmp_path / "log.jsonl", "--max_samples", "6")
    assert_filed(log, 6)


def test_a_users_fn_that_records_nothing_still_leaves_one_event_per_call(tmp_path):
    registry, env = users_fn(tmp_path, "quiet", "self, prompt, **kwargs", '{"choice": 1}')
    path = tmp_path / "log.jsonl"
    run_cli([cli("oaieval"), "quiet", "econarena.beauty_M", "--registry_path", str(registry),
             "--record_path", str(path), "--max_samples", "3", "--extra_eval_params", "max_concurrency=4"], env)
    log = read_log(path)
    assert_filed(log, 3)
    assert {c.data.get("recorded_by") for c in read_sessions(path).calls} == {"econarena"}
    assert REGISTRY.exists()


def test_a_missing_seat_call_is_named_by_run_and_seat_counted_from_1(tmp_path):
    """The problems a person reads count runs from 1, as seats, the prompts and the report do."""
    log = oaieval("econarena/nash", "beauty_L", base_env(), tmp_path / "log.jsonl", "--max_samples", "1")
    lines = log.path.read_text(encoding="utf-8").splitlines()
    first_call = next(i for i, line in enumerate(lines) if '"type": "sampling"' in line
                      and '"run": 0' in line and '"seat": 1,' in line)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:first_call] + lines[first_call + 1:]) + "\n", encoding="utf-8")
    session = read_log(log.path).sessions[0]["session"]
    assert filing_problems(cut) == [f"session {session}: 0 sampling events for run 1 seat 1"]


def test_a_prompt_of_another_session_is_named_though_its_tag_is_right(tmp_path):
    """The tag places the call; its prompt must still state what the tag's run gave that seat (here the
    seat's private value), or it is another session's prompt filed under this one."""
    log = oaieval("econarena/nash", "auction_L", base_env(), tmp_path / "log.jsonl", "--max_samples", "2")
    rows = [json.loads(line) for line in log.path.read_text(encoding="utf-8").splitlines()]
    runs = {(r["data"]["session"], r["data"]["run"]): r["data"] for r in rows if r.get("type") == "econarena_run"}
    calls = [r["data"] for r in rows if r.get("type") == "sampling"]
    value = {id(c): runs[(c["econarena"]["session"], c["econarena"]["run"])]["values"][c["econarena"]["seat"] - 1]
             for c in calls}
    mine = calls[0]
    theirs = next(c for c in calls if c["econarena"]["session"] != mine["econarena"]["session"]
                  and value[id(c)] != value[id(mine)] and str(value[id(c)]) not in str(mine["prompt"]))
    mine["prompt"] = theirs["prompt"]
    swapped = tmp_path / "swapped.jsonl"
    swapped.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    tag = mine["econarena"]
    assert filing_problems(swapped) == [
        f"session {tag['session']}: run {tag['run'] + 1} seat {tag['seat']}'s prompt is another session's: "
        f"it does not state the session's {{'value': {float(value[id(mine)])}}}"]
