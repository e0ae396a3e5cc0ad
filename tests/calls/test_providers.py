"""Claude and Gemini through their OpenAI-compatible endpoints (docs/providers.md): what their
documentation says they answer when busy or limited, read the way the eval reads OpenAI's.

In-process: the shapes themselves (Anthropic's 529 ``overloaded_error`` and ``anthropic-ratelimit-*``
headers, Google's ``RESOURCE_EXHAUSTED``, bare or wrapped in a list, with its ``retryDelay``).
End to end: the real ``oaieval econarena/chat`` with ``api_base`` pointed at a local server that
answers in those shapes (``openai_server.anthropic_answer`` / ``google_answer``).
"""
from __future__ import annotations

import subprocess
import time

try:  # the HTTP library the installed openai client is built on
    import httpx2 as httpx
except ImportError:  # openai 2.x (Python 3.9)
    import httpx
import openai
import pytest

from econarena_evals.calls.dispatch import call_all
from econarena_evals.calls.errors import (
    fatal,
    is_endpoint_failure,
    is_overloaded,
    is_rate_limited,
    is_transient,
    server_wait_said,
)
from econarena_evals.calls.lanes import Lane
from econarena_evals.calls.limits import seconds_until, stated_limits
from econarena_evals.calls.policy import CallPolicy
from econarena_evals.calls.state import CallState
from econarena_evals.log.evallog import read_log
from econarena_evals.log.filing import filing_problems

from conftest import REGISTRY, base_env, cli
from openai_server import OpenAIServer, anthropic_answer, google_answer
from policies import scripted

FAST = dict(backoff_base_s=0.001, backoff_cap_s=0.002)


def refusal(status: int, body, headers=None):
    """The exception the openai client raises for this answer, built the way it builds it."""
    client = openai.OpenAI(api_key="x", base_url="http://127.0.0.1/v1")
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(status, headers=headers or {}, json=body, request=request)
    return client._make_status_error_from_response(response)


OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "request_id": "req_1"}
EXHAUSTED = {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                       "message": "You exceeded your current quota, please check your plan and billing details.",
                       "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}]}}


def test_anthropic_s_529_is_an_overload_never_a_quota_a_rate_limit_or_a_down_endpoint():
    exc = refusal(529, OVERLOADED)
    assert is_overloaded(exc) and is_transient(exc) and not is_endpoint_failure(exc)
    assert not is_rate_limited(exc) and fatal(exc) is None


def test_a_529_is_waited_out_and_the_call_answers_without_spending_a_try():
    tries = []

    def call():
        tries.append(1)
        if len(tries) <= 2:
            raise refusal(529, OVERLOADED)
        return "ok"

    calls = CallState(CallPolicy(max_attempts=1, **FAST))
    assert call_all(calls, [(object(), call)]) == ["ok"] and len(tries) == 3
    assert calls.stop_reason is None


def test_anthropic_s_spend_limit_and_billing_stop_the_run_as_a_quota():
    spend = {"type": "error", "error": {"type": "rate_limit_error", "message": "You have reached your spend limit.",
                                        "details": {"error_code": "enforced_spend_limit_reached"}}}
    assert fatal(refusal(429, spend))[0] == "quota" and not is_rate_limited(refusal(429, spend))
    assert fatal(refusal(402, {"type": "error", "error": {"type": "billing_error", "message": "x"}}))[0] == "quota"
    plain = {"type": "error", "error": {"type": "rate_limit_error", "message": "This request would exceed your "
                                        "organization's rate limit of 50 requests per minute."}}
    assert is_rate_limited(refusal(429, plain, {"retry-after": "3"}))
    assert server_wait_said(refusal(429, plain, {"retry-after": "3"})) == (3.0, "retry-after")


@pytest.mark.parametrize("body", [EXHAUSTED, [EXHAUSTED]], ids=["bare", "wrapped in a list"])
def test_google_s_resource_exhausted_is_a_rate_limit_with_its_retry_delay(body):
    exc = refusal(429, body)
    assert is_rate_limited(exc) and fatal(exc) is None
    assert server_wait_said(exc) == (7.0, "retryDelay")
    lane = Lane("gemini", CallState())
    before = time.monotonic()
    lane.refused(*server_wait_said(exc))
    assert lane.pace.paused_until - before >= 7.0  # the lane waits as asked, from when it was told


def test_google_s_message_wait_and_a_tier_with_no_allowance():
    said = {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Quota exceeded for metric: x, "
                      "limit: 250, model: gemini-2.5-flash\nPlease retry in 11.6659s."}}
    assert server_wait_said(refusal(429, said)) == (pytest.approx(11.6659), "the error message")
    none = {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Quota exceeded for metric: "
                      "generate_content_free_tier_requests, limit: 0, model: gemini-2.5-pro"}}
    assert fatal(refusal(429, none))[0] == "quota"


def test_anthropic_s_headers_set_the_lane_s_pace_and_pause_it_when_used_up():
    reset_at = int(time.time()) + 30
    reset = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(reset_at))
    headers = {"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0",
               "anthropic-ratelimit-requests-reset": reset, "anthropic-ratelimit-tokens-limit": "30000",
               "anthropic-ratelimit-input-tokens-limit": "30000", "anthropic-ratelimit-output-tokens-limit": "8000"}
    most_left = reset_at - time.time()
    rpm, tpm, used_up = stated_limits(headers)
    least_left = reset_at - time.time()
    assert (rpm, tpm) == (50, 8000) and used_up[0][1] == "anthropic-ratelimit-requests-reset"
    assert least_left <= used_up[0][0] <= most_left  # what is left until the stated reset
    calls = CallState()
    lane = Lane(("https://api.anthropic.com/v1/", "keyhash", "claude-sonnet-4-5"), calls)
    lane.learn(headers)
    assert (lane.pace.rpm, lane.pace.tpm) == (50, 8000) and calls.limits[lane.key] == (50, 8000)
    # paused until the stated reset: what is left of the pause is what is left until the reset
    pause_left, reset_left = lane.pace.paused_until - time.monotonic(), reset_at - time.time()
    assert abs(pause_left - reset_left) < 1.0
    assert stated_limits({"content-type": "application/json"}) is None
    nanosecond_stamp, no_stamp = seconds_until("2025-10-25T12:01:00.123456789+02:00", now=0), seconds_until("soon")
    assert nanosecond_stamp > 0 and no_stamp is None


def run(server, model: str, log, *extra: str):
    env = base_env() | {"OPENAI_API_KEY": "sk-provider-test", "OPENAI_BASE_URL": ""}
    return subprocess.run([cli("oaieval"), f"econarena/chat:{model}", "econarena.beauty_L", "--registry_path",
                           str(REGISTRY), "--record_path", str(log), "--max_samples", "2",
                           "--completion_args", f"api_base={server.base_url}/", *extra],
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.e2e
def test_claude_through_its_openai_endpoint_paced_by_its_headers_and_529s_retried(tmp_path):
    overloaded, limited = (1, 3, 5), (20, 21)
    server = OpenAIServer(scripted, models=("claude-sonnet-4-5",),
                          answer=anthropic_answer(rpm=500, tokens=1_000_000, overloaded=overloaded,
                                                  limited=limited)).start()
    try:
        proc = run(server, "claude-sonnet-4-5", tmp_path / "log.jsonl")
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr[-2000:]
    log = read_log(tmp_path / "log.jsonl")
    assert log.final_report["sessions"] == 2 and log.final_report["errored_sessions"] == 0
    # each seat call answered once; a 529 costs one more try, a 429 one more request, nothing else
    assert len(server.requests) == 100 + len(overloaded) + len(limited)
    assert sum(r.get("answered", False) for r in server.requests) == 100
    # the headers' limits reached the lane: the run is paced by them, and says so
    assert "the endpoint states 500 requests/min and 1,000,000 tokens/min" in proc.stderr
    assert "stopped" not in proc.stderr and filing_problems(log.path) == []


@pytest.mark.e2e
def test_gemini_through_its_openai_endpoint_waits_out_resource_exhausted(tmp_path):
    exhausted = (2, 4, 6)
    server = OpenAIServer(scripted, models=("gemini-2.5-flash",),
                          answer=google_answer(exhausted=exhausted, wrapped=(2, 6))).start()
    try:
        # one try per call: a refusal waited out is not a try, so none of them may cost a session
        proc = run(server, "gemini-2.5-flash", tmp_path / "log.jsonl", "--extra_eval_params", "max_attempts=1")
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr[-2000:]
    log = read_log(tmp_path / "log.jsonl")
    assert log.final_report["sessions"] == 2 and log.final_report["errored_sessions"] == 0
    assert len(server.requests) == 100 + len(exhausted)  # each refused request sent once more
    assert "quota" not in proc.stderr and filing_problems(log.path) == []
