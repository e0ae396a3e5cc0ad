"""Paid endpoints through the real oaieval: rate limits, a quota that runs out, a refused key,
Azure OpenAI, replies cut off at the token limit, the plan line and the exit status.

The server limits requests and tokens the way the OpenAI API does (``openai_server.RateLimiter``:
continuously refilled buckets of one second, refused requests counted, the API's 429 body and
headers). bench/rate_limits.py runs the same scenarios at larger sizes (docs/benchmarks.md).
"""
from __future__ import annotations

import json
import subprocess

import pytest

from econarena_evals.log.evallog import read_log
from econarena_evals.log.filing import filing_problems

from conftest import REGISTRY, base_env, cli
from openai_server import OpenAIServer, RateLimiter
from policies import scripted

pytestmark = pytest.mark.e2e


def run(server, fn: str, cell: str, log, *extra: str, env_extra=None, timeout=300):
    """The finished ``oaieval``. Tests bound what they can count (requests, events), never the
    time a run took: bench/rate_limits.py prints those times (docs/benchmarks.md)."""
    env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-paid"} | (env_extra or {})
    return subprocess.run([cli("oaieval"), fn, f"econarena.{cell}", "--registry_path", str(REGISTRY),
                           "--record_path", str(log), *extra], env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def limited():
    servers = []

    def make(**limits):
        limiter = RateLimiter(**limits)
        servers.append(OpenAIServer(scripted, models=("gpt-4", "gpt-4o"), limiter=limiter).start())
        return servers[-1], limiter

    yield make
    for s in servers:
        s.stop()


def test_a_requests_per_minute_limit_slows_the_run_and_fails_nothing(limited, tmp_path):
    server, limiter = limited(rpm=1200)  # 20 a second, a bucket of 20
    proc = run(server, "econarena/chat:gpt-4o", "beauty_L", tmp_path / "log.jsonl", "--max_samples", "4")
    assert proc.returncode == 0, proc.stderr[-2000:]
    log = read_log(tmp_path / "log.jsonl")
    assert log.final_report["sessions"] == 4 and log.final_report["errored_sessions"] == 0
    calls = 4 * 50
    assert limiter.answered == calls
    # a few refusals at most, never a storm: unpaced, 200 calls at a bucket of 20 are mostly refused
    assert limiter.count <= 1.2 * calls + 8
    assert filing_problems(log.path) == []
    assert "econarena: plan: econarena.beauty_L.dev.v0: 200 seat calls (4 sessions)" in proc.stderr


def test_a_tokens_per_minute_limit_counts_prompt_plus_max_tokens(limited, tmp_path):
    server, limiter = limited(tpm=240_000)  # 4,000 tokens a second: about ten requests of max_tokens 64
    proc = run(server, "econarena/chat:gpt-4o", "beauty_L", tmp_path / "log.jsonl", "--max_samples", "2",
                  "--extra_eval_params", "max_tokens=64")
    assert proc.returncode == 0, proc.stderr[-2000:]
    log = read_log(tmp_path / "log.jsonl")
    assert log.final_report["sessions"] == 2 and log.final_report["errored_sessions"] == 0
    assert limiter.count <= 1.2 * 100 + 8


def test_a_quota_that_runs_out_stops_the_run_at_once(limited, tmp_path):
    server, limiter = limited(rpm=60_000, quota_requests=150)
    proc = run(server, "econarena/chat:gpt-4o", "beauty_hist", tmp_path / "log.jsonl",
               "--extra_eval_params", "max_concurrency=16")
    assert proc.returncode == 4
    assert limiter.first_quota_refusal is not None
    assert limiter.count - limiter.first_quota_refusal <= 16  # one cap's worth at most after the first
    stopped = [line for line in proc.stderr.splitlines() if line.startswith("econarena: stopped:")]
    assert len(stopped) == 1 and "quota" in stopped[0]
    assert "resume_from=" in proc.stderr and "Traceback" not in proc.stderr
    log = read_log(tmp_path / "log.jsonl")
    assert log.final_report is not None  # what finished is reported and kept
    # every run whose five seats were answered is on disk (resume keeps them); at most four answered
    # calls of one unfinished run per session in flight (EVALS_THREADS=10) are lost
    assert 0 <= limiter.answered - 5 * len(log.runs) <= 4 * 10


def test_a_quota_at_the_default_concurrency_is_not_called_an_endpoint_down(limited, tmp_path):
    """Every call in flight when the quota runs out comes back refused: more than the breaker's 20 in a
    row, from an endpoint that is up. The stop says quota, and nothing of an endpoint not answering."""
    server, limiter = limited(rpm=60_000, quota_requests=150)
    proc = run(server, "econarena/chat:gpt-4o", "beauty_L", tmp_path / "log.jsonl")
    assert proc.returncode == 4 and limiter.quota_refused > 20  # more refusals than the breaker's threshold
    (stopped,) = [line for line in proc.stderr.splitlines() if line.startswith("econarena: stopped:")]
    assert "quota is used up" in stopped and "presumed down" not in stopped and "not answering" not in stopped


def test_a_refused_key_stops_the_run_with_one_line(tmp_path):
    server = OpenAIServer(scripted, models=("gpt-4",), azure_key="right-key").start()  # any bearer key: 404/401
    try:
        proc = run(server, "econarena/chat:gpt-4o", "beauty_L", tmp_path / "log.jsonl",
                   "--extra_eval_params", "max_concurrency=8")
    finally:
        server.stop()
    assert proc.returncode == 4
    assert len(server.requests) <= 8 + 8  # the first error stops every later request
    assert sum(line.startswith("econarena: stopped:") for line in proc.stderr.splitlines()) == 1


# evals' own fn wants a key whatever the endpoint; econarena/chat only for the OpenAI API (a local
# server needs none), which it would reach here with no OPENAI_BASE_URL: refused before the plan,
# in one line, exit 2, no log left and nothing sent
@pytest.mark.parametrize("fn,local", [("gpt-4", True), ("econarena/chat:gpt-4o", False)])
def test_no_api_key_is_refused_in_one_line_before_any_request(tmp_path, fn, local):
    server = OpenAIServer(scripted, models=("gpt-4",)).start()
    env = base_env() | ({"OPENAI_BASE_URL": server.base_url} if local else {})  # and no OPENAI_API_KEY
    try:
        proc = subprocess.run([cli("oaieval"), fn, "econarena.beauty_L", "--max_samples", "2",
                               "--record_path", str(tmp_path / "log.jsonl")], env=env, capture_output=True,
                              text=True, timeout=300)
    finally:
        server.stop()
    assert proc.returncode == 2, proc.stderr[-2000:]
    ours = [line for line in proc.stderr.splitlines() if line.startswith("econarena:")]
    assert len(ours) == 1 and ours[0].startswith("econarena: no API key for ") and "OPENAI_API_KEY" in ours[0], ours
    assert "plan:" not in proc.stderr and "***" not in ours[0]  # before the plan; nothing reads as masked
    assert server.requests == [] and not (tmp_path / "log.jsonl").exists()


def test_azure_openai_through_the_chat_fn(tmp_path):
    server = OpenAIServer(scripted, models=("gpt-4",), azure_key="azure-secret").start()
    root = server.base_url[: -len("/v1")]
    try:
        proc = run(server, "econarena/chat", "beauty_L", tmp_path / "log.jsonl", "--max_samples", "2",
                      "--completion_args", "azure_deployment=my-gpt4o,api_version=2024-10-21",
                      env_extra={"AZURE_OPENAI_ENDPOINT": root, "AZURE_OPENAI_API_KEY": "azure-secret",
                                 "OPENAI_BASE_URL": ""})
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert read_log(tmp_path / "log.jsonl").final_report["sessions"] == 2
    assert server.requests and all(r["path"] == "/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21"
                                   and r["headers"].get("api-key") == "azure-secret" for r in server.requests)


def test_replies_cut_off_at_the_token_limit_are_recorded_and_counted(server, tmp_path):
    proc = run(server, "econarena/chat:gpt-4", "beauty_L", tmp_path / "log.jsonl", "--max_samples", "2",
                  "--extra_eval_params", "max_tokens=3")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    sampling = [r["data"] for r in rows if r.get("type") == "sampling"]
    assert len(sampling) == 100 and {d["finish_reason"] for d in sampling} == {"length"}
    log = read_log(tmp_path / "log.jsonl")
    assert all(seat["finish_reason"] == "length" and not seat["valid"] for r in log.runs for seat in r["seats"])
    assert [s["cut_off"] for s in log.sessions] == [50, 50]
    # the summary and the report tell truncation apart from other rule breaks
    summary = subprocess.run([cli("econarena-summary"), str(tmp_path / "log.jsonl")], env=base_env(),
                             capture_output=True, text=True, timeout=120)
    assert "100 repl(ies) cut off at the token limit" in summary.stdout
    subprocess.run([cli("econarena-report"), str(tmp_path / "log.jsonl"), "--out", str(tmp_path / "rep")],
                   env=base_env(), capture_output=True, text=True, timeout=300, check=True)
    kinds = json.loads((tmp_path / "rep" / "report.json").read_text())["rule_breaks"]
    [by_column] = kinds.values()
    [counts] = by_column.values()
    assert counts["cut off at token limit"] == 100


def test_a_run_with_an_errored_session_exits_non_zero(tmp_path):
    env = base_env() | {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-x"}
    proc = subprocess.run([cli("oaieval"), "gpt-4", "econarena.beauty_L", "--registry_path", str(REGISTRY),
                           "--record_path", str(tmp_path / "log.jsonl"), "--max_samples", "2",
                           "--extra_eval_params", "call_timeout_s=2,max_attempts=2,backoff_base_s=0.01"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3
    assert read_log(tmp_path / "log.jsonl").final_report["errored_sessions"] == 2  # and the log is complete


DAY_WAIT = {"retry-after": "86400"}  # a gateway's idea of a daily limit, on the first request only


@pytest.mark.parametrize("params", ["", "rate_limit_patience_s=20,call_timeout_s=30"])
def test_a_retry_after_of_a_day_is_capped_said_once_and_the_run_finishes(params, tmp_path):
    refusal = {"error": {"message": "Rate limit reached for requests per day", "type": "requests",
                         "param": None, "code": "rate_limit_exceeded"}}
    server = OpenAIServer(scripted, models=("gpt-4",),
                          answer=lambda n, payload: (429, refusal, DAY_WAIT) if n == 0 else (200, payload, {})).start()
    try:
        proc = run(server, "econarena/chat:gpt-4", "beauty_L", tmp_path / "log.jsonl", "--max_samples", "1",
                   *(["--extra_eval_params", params] if params else []), timeout=240)
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(server.requests) == 50 + 1  # every seat call answered once, the refused one sent again
    capped = [line for line in proc.stderr.splitlines() if line.startswith("econarena: rate limit:")]
    assert len(capped) == 1 and "86,400 s (retry-after)" in capped[0]
    assert filing_problems(tmp_path / "log.jsonl") == []


def test_the_inspect_front_end_s_endpoint_hears_the_limits_its_answers_state():
    """on_inspect's calls are seat calls too: their lane learns the key's limits from each answer's
    headers, and a wrong option is the client's own TypeError, not a completion fn's signature."""
    from econarena_evals.on_inspect.endpoint import Endpoint

    server = OpenAIServer(lambda text: '{"choice": 1}', models=("gpt-4o",), limiter=RateLimiter(rpm=300)).start()
    try:
        endpoint = Endpoint("gpt-4o", server.base_url, "sk-test-paid")
        assert endpoint.call([{"role": "user", "content": "hi"}], max_tokens=16).text == '{"choice": 1}'
        assert endpoint.call_state.limits[endpoint.lane] == (300.0, None)
        with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'") as refused:
            Endpoint("gpt-4o", server.base_url, "sk-test-paid", bogus=1).call([{"role": "user", "content": "hi"}])
        assert "**kwargs" not in str(refused.value)
    finally:
        server.stop()
