"""A reply is data, whatever its bytes; an endpoint's fault is never the model's rule break.

In-process: the real evals ``LocalRecorder`` writing to a file. End to end: the real ``oaieval``
against a local server that sends lone surrogates, control characters, a reply longer than the log
keeps, and HTTP 200 bodies that are no completion.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from evals.base import RunSpec
from evals.record import LocalRecorder
from hypothesis import given
from hypothesis import strategies as st

from econarena_evals.integration.recorder import MAX_STORED_CHARS, LogNames, escape, wrap
from econarena_evals.log.evallog import read_log
from econarena_evals.log.filing import filing_problems
from econarena_evals.log.format import SEAT_TAG
from econarena_evals.log.format import UNRECORDABLE_EVENT as UNRECORDABLE

from conftest import ERRORED, REGISTRY, base_env, cli, run_cli, users_fn
from openai_server import OpenAIServer, with_reply
from policies import scripted

# any text at all, lone surrogates (Cs) and control characters (Cc) included
ANY_TEXT = st.text(st.characters(codec=None, categories=["Cs", "Cc", "Lu", "Ll", "Nd", "Po", "So", "Zs"]))


def recorder(path: Path) -> LocalRecorder:
    spec = RunSpec(completion_fns=["x"], eval_name="econarena.test", base_eval="econarena", split="dev",
                   run_config={}, created_by="test", run_id="run1", created_at="now")
    rec = LocalRecorder(str(path), spec)
    wrap(rec, LogNames(seat_tag=SEAT_TAG, unrecordable=UNRECORDABLE, session="econarena_session"),
         on_write_error=lambda exc: None)
    return rec


def rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:  # strict: every byte written is UTF-8
        return [json.loads(line) for line in f]


@given(reply=ANY_TEXT, prompt=ANY_TEXT)
def test_any_reply_is_recorded_and_reads_back_as_json(tmp_path_factory, reply, prompt):
    log = tmp_path_factory.mktemp("log") / "log.jsonl"
    rec = recorder(log)
    rec.record_sampling(prompt=[{"role": "user", "content": prompt}], sampled=[reply], sample_id="s.0")
    rec.record_event("econarena_session", {"error": reply}, sample_id="s.0")
    rec.flush_events()
    sampling, session = rows(log)[1:]
    assert sampling["data"]["sampled"] == [escape(reply)]
    assert session["data"]["error"] == escape(reply)
    assert sampling["data"].get("sampled_escaped", False) == (escape(reply) != reply)
    assert sampling["data"]["prompt"] == [{"role": "user", "content": escape(prompt)}]


@pytest.mark.parametrize("length", [MAX_STORED_CHARS, MAX_STORED_CHARS + 1, 3 * MAX_STORED_CHARS])
def test_the_log_keeps_the_first_64k_characters_of_a_reply_and_its_length(tmp_path, length):
    rec = recorder(tmp_path / "log.jsonl")
    reply = "\ud800" + "x" * (length - 1)
    rec.record_sampling(prompt="p", sampled=[reply, "short"], sample_id="s.0")
    rec.flush_events()
    [row] = rows(tmp_path / "log.jsonl")[1:]
    kept = row["data"]["sampled"]
    assert kept == ["\\ud800" + "x" * (min(length, MAX_STORED_CHARS) - 1), "short"]
    assert row["data"].get("sampled_full_chars") == ([length, 5] if length > MAX_STORED_CHARS else None)
    assert row["data"]["sampled_escaped"] is True


def test_one_event_that_cannot_be_written_does_not_take_the_others_down(tmp_path):
    rec = recorder(tmp_path / "log.jsonl")
    tag = {"cell": "beauty_L", "session": 0, "run": 1, "seat": 2, "player": "p"}
    rec.record_sampling(prompt="p", sampled=["a"], sample_id="s.0")
    rec.record_sampling(prompt="p", sampled=["b"], sample_id="s.0", **{SEAT_TAG: tag}, odd=object())
    rec.record_sampling(prompt="p", sampled=["c"], sample_id="s.0")
    rec.flush_events()
    written = rows(tmp_path / "log.jsonl")[1:]
    assert [r["type"] for r in written] == ["sampling", UNRECORDABLE, "sampling"]
    assert [r["data"]["sampled"] for r in written if r["type"] == "sampling"] == [["a"], ["c"]]
    assert written[1]["data"][SEAT_TAG] == tag and written[1]["data"]["event_type"] == "sampling"
    assert written[1]["data"]["error"].split(":")[0].endswith("Error")  # what failed, named
    assert rec._flushes_done == rec._flushes_started  # evals' own bookkeeping still lets the next flush start


# ---- end to end ----

def oaieval(server: OpenAIServer, fn: str, log: Path, samples: int, returncode=0, params: str = "",
            env: dict | None = None):
    env = (env or base_env()) | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-local"}
    extra = ["--extra_eval_params", params] if params else []
    return run_cli([cli("oaieval"), fn, "econarena.beauty_L", "--registry_path", str(REGISTRY), "--record_path",
                    str(log), "--max_samples", str(samples), *extra], env, returncode=returncode)


def assert_every_finished_session_is_filed(log: Path) -> None:
    parsed = read_log(log)
    finished = {s["session"] for s in parsed.sessions if not s["errored"]}
    calls = Counter((r["data"][SEAT_TAG]["session"], r["data"][SEAT_TAG]["run"], r["data"][SEAT_TAG]["seat"])
                    for r in rows(log) if r.get("type") == "sampling")
    for session in finished:
        assert [calls[(session, run, seat)] for run in range(10) for seat in range(1, 6)] == [1] * 50
    assert filing_problems(log) == []


# a valid answer after 70,000 characters, then a lone surrogate and control characters: the score
# reads the whole reply (valid), the log keeps its first 65,536 characters, escaped
ODD_REPLY = "x" * 70_000 + '{"choice": 5}' + "\ud800\x00\x07\x1b"


@pytest.mark.parametrize("fn", ["econarena/chat:gpt-4", "gpt-4"])
@pytest.mark.e2e
def test_a_reply_with_lone_surrogates_control_chars_and_70k_characters_is_scored_and_kept(fn, tmp_path):
    server = OpenAIServer(scripted, models=("gpt-4",), answer=lambda n, p: (200, with_reply(p, ODD_REPLY), {})).start()
    try:
        proc = oaieval(server, fn, tmp_path / "log.jsonl", 2)
    finally:
        server.stop()
    assert "Traceback" not in proc.stderr
    log = read_log(tmp_path / "log.jsonl")
    assert log.final_report["sessions"] == 2
    assert all(seat["valid"] and seat["action"] == 5 for run in log.runs for seat in run["seats"])  # scored whole
    sampling = [r["data"] for r in rows(tmp_path / "log.jsonl") if r.get("type") == "sampling"]
    assert len(sampling) == 100
    assert all(d["sampled"] == ["x" * MAX_STORED_CHARS] and d["sampled_full_chars"] == [len(ODD_REPLY)]
               for d in sampling)
    assert_every_finished_session_is_filed(tmp_path / "log.jsonl")


@pytest.mark.e2e
def test_a_surrogate_within_the_kept_part_is_stored_escaped(tmp_path):
    reply = '{"choice": 5}\ud800\x00'
    server = OpenAIServer(scripted, models=("gpt-4",), answer=lambda n, p: (200, with_reply(p, reply), {})).start()
    try:
        oaieval(server, "econarena/chat:gpt-4", tmp_path / "log.jsonl", 1)
    finally:
        server.stop()
    sampling = [r["data"] for r in rows(tmp_path / "log.jsonl") if r.get("type") == "sampling"]
    assert len(sampling) == 50 and all(d["sampled"] == ['{"choice": 5}\\ud800\x00'] and d["sampled_escaped"]
                                       and "sampled_full_chars" not in d for d in sampling)
    assert_every_finished_session_is_filed(tmp_path / "log.jsonl")


NOT_COMPLETIONS = {
    "choices: []": lambda p: {**p, "choices": []},
    "no choices": lambda p: {k: v for k, v in p.items() if k != "choices"},
    "no message": lambda p: {**p, "choices": [{"index": 0, "finish_reason": "stop"}]},
}


@pytest.mark.parametrize("fn", ["econarena/chat:gpt-4", "gpt-4"])
@pytest.mark.parametrize("body", sorted(NOT_COMPLETIONS))
@pytest.mark.e2e
def test_a_200_that_is_no_completion_is_the_endpoints_error_not_a_rule_break(fn, body, tmp_path):
    shape = NOT_COMPLETIONS[body]
    server = OpenAIServer(scripted, models=("gpt-4",), answer=lambda n, p: (200, shape(p), {})).start()
    try:
        proc = oaieval(server, fn, tmp_path / "log.jsonl", 2, returncode=ERRORED,
                       params="max_attempts=3,backoff_base_s=0.01,backoff_cap_s=0.02")
    finally:
        server.stop()
    log = read_log(tmp_path / "log.jsonl")
    assert log.final_report["errored_sessions"] == 2 and log.final_report["sessions"] == 0
    assert all("not a completion" in s["error"] for s in log.sessions)
    assert "not a completion" in proc.stderr
    # retried under the call policy: at most max_attempts requests per seat call of the sessions
    assert 3 <= len(server.requests) <= 2 * 50 * 3


@pytest.mark.e2e
def test_a_null_content_is_still_the_models_rule_break(tmp_path):
    server = OpenAIServer(scripted, models=("gpt-4",), answer=lambda n, p: (200, with_reply(p, None), {})).start()
    try:
        oaieval(server, "gpt-4", tmp_path / "log.jsonl", 1)
    finally:
        server.stop()
    log = read_log(tmp_path / "log.jsonl")
    assert log.final_report["sessions"] == 1
    assert not any(seat["valid"] for run in log.runs for seat in run["seats"])
    assert len(server.requests) == 50  # no retry: the model answered
    assert_every_finished_session_is_filed(tmp_path / "log.jsonl")


@pytest.mark.e2e
def test_a_users_fn_that_returns_no_completions_errors_its_sessions(tmp_path):
    registry, env = users_fn(tmp_path, "empty", "self, prompt, **kwargs", "unused")
    module = tmp_path / "empty_fn.py"
    module.write_text(module.read_text().replace("return ['unused']", "return []"))
    log = tmp_path / "log.jsonl"
    proc = run_cli([cli("oaieval"), "empty", "econarena.beauty_L", "--registry_path", str(registry),
                    "--record_path", str(log), "--max_samples", "2", "--extra_eval_params",
                    "max_attempts=2,backoff_base_s=0.01,backoff_cap_s=0.02"], env, returncode=ERRORED)
    parsed = read_log(log)
    assert parsed.final_report["errored_sessions"] == 2
    assert "returned no completions" in proc.stderr
