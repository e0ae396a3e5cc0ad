"""Rate limits and errors no retry cures, in-process: reading what the server says, pacing, stopping."""
from __future__ import annotations

import time

try:  # the HTTP library the installed openai client is built on
    import httpx2 as httpx
except ImportError:  # openai 2.x (Python 3.9)
    import httpx
import openai
import pytest

from econarena_evals.calls import seat_call
from econarena_evals.calls.dispatch import call_all
from econarena_evals.calls.errors import (
    RunStopped,
    fatal_cause,
    is_endpoint_failure,
    is_rate_limited,
    server_wait,
    server_wait_said,
)
from econarena_evals.calls.lanes import Lane, lane_for
from econarena_evals.calls.limits import parse_duration
from econarena_evals.calls.pace import MAX_SERVER_WAIT_S, PACE_SHARE
from econarena_evals.calls.policy import CallPolicy
from econarena_evals.calls.state import CallState

FAST = dict(backoff_base_s=0.001, backoff_cap_s=0.002)


def status_error(status: int, code: str, message: str = "", headers=None):
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(status, headers=headers or {}, request=request)
    body = {"message": message or code, "type": code, "code": code}
    cls = {429: openai.RateLimitError, 401: openai.AuthenticationError, 403: openai.PermissionDeniedError,
           404: openai.NotFoundError, 400: openai.BadRequestError}.get(status, openai.APIStatusError)
    return cls(message or code, response=response, body=body)


@pytest.mark.parametrize("text,seconds", [("1s", 1.0), ("6m0s", 360.0), ("250ms", 0.25), ("1h2m3.5s", 3723.5),
                                          ("20", 20.0), ("0.5", 0.5), ("", None), ("soon", None)])
def test_durations_in_the_forms_the_api_writes_them(text, seconds):
    assert parse_duration(text) == seconds


def test_the_wait_the_server_asks_for_in_order_of_precision():
    assert server_wait(status_error(429, "rate_limit_exceeded", headers={"retry-after-ms": "120", "retry-after": "1"})) == 0.12
    assert server_wait(status_error(429, "rate_limit_exceeded", headers={"retry-after": "2"})) == 2.0
    said = status_error(429, "rate_limit_exceeded", "Rate limit reached ... Please try again in 340ms.")
    assert server_wait(said) == pytest.approx(0.34)
    assert server_wait(status_error(429, "rate_limit_exceeded", "Please try again in 1.5s.")) == 1.5
    reset = status_error(429, "rate_limit_exceeded", headers={"x-ratelimit-reset-requests": "1s",
                                                              "x-ratelimit-reset-tokens": "6m0s"})
    assert server_wait(reset) == 360.0
    assert server_wait(status_error(429, "rate_limit_exceeded")) is None


def test_which_errors_wait_which_retry_and_which_stop_the_run():
    limited = status_error(429, "rate_limit_exceeded")
    assert is_rate_limited(limited) and fatal_cause(limited) is None and not is_endpoint_failure(limited)
    quota = status_error(429, "insufficient_quota", "You exceeded your current quota")
    assert not is_rate_limited(quota) and "quota" in fatal_cause(quota)
    # the endpoint is up: its breaker counts no quota refusal (the run stops on the quota's own line)
    assert not is_endpoint_failure(quota) and not is_endpoint_failure(status_error(402, "billing_error"))
    for status, code in ((401, "invalid_api_key"), (403, "forbidden"), (404, "model_not_found")):
        assert str(status) in fatal_cause(status_error(status, code))
    too_long = status_error(400, "context_length_exceeded", "This model's maximum context length is 8192 tokens")
    assert "context" in fatal_cause(too_long)
    assert fatal_cause(status_error(400, "invalid_request_error", "bad temperature")) is None
    assert fatal_cause(status_error(500, "server_error")) is None and is_endpoint_failure(status_error(500, "x"))


def test_rate_limited_tries_are_waited_out_and_do_not_count_as_attempts():
    refusals = {"left": 5}

    def call():
        if refusals["left"]:
            refusals["left"] -= 1
            raise status_error(429, "rate_limit_exceeded", headers={"retry-after-ms": "5"})
        return "ok"

    # one attempt allowed, a breaker that would open at 2 failures: neither is touched by rate limits
    calls = CallState(CallPolicy(max_attempts=1, breaker_threshold=2, **FAST))
    assert call_all(calls, [(object(), call)]) == ["ok"]
    assert calls.refused == 5 and calls.answered == 1 and calls.stop_reason is None


def test_an_error_no_retry_cures_stops_the_run_and_nothing_more_is_sent():
    sent = []

    def refused():
        sent.append(1)
        raise status_error(401, "invalid_api_key", "Incorrect API key provided")

    calls = CallState(CallPolicy(max_attempts=4, max_concurrency=1, **FAST))
    results = call_all(calls, [(object(), refused)] * 10)
    assert len(sent) == 1  # the first refusal stopped the nine queued behind it
    assert isinstance(results[0], openai.AuthenticationError)
    assert all(isinstance(r, RunStopped) for r in results[1:])
    assert "401" in calls.stop_reason
    assert all(isinstance(r, RunStopped) for r in call_all(calls, [(object(), lambda: "ok")]))


def test_a_lane_paces_to_the_limits_an_answer_states():
    calls = CallState()
    lane = lane_for(calls, "test")
    lane.learn({"x-ratelimit-limit-requests": "600", "x-ratelimit-limit-tokens": "60000"})
    assert (lane.pace.rpm, lane.pace.tpm) == (600, 60000) and calls.limits["test"] == (600, 60000)
    start = lane.pace.tat_requests
    for _ in range(3):
        assert lane.acquire(100, lambda: False)
        lane.release()
    # each request moves the schedule on by one interval at the pacing share of the limit
    assert lane.pace.tat_requests - max(start, 0) >= 2 * 60 / (600 * PACE_SHARE)
    assert lane.pace.tat_tokens > 0


def test_a_seat_call_s_lane_hears_the_limits_its_answer_states():
    """The one channel from a completion fn to the engine is the seat call it answers: the headers
    it hands over (``seat_call.heard``) reach that call's lane; outside a seat call they go nowhere."""
    stated = {"x-ratelimit-limit-requests": "600", "x-ratelimit-limit-tokens": "60000"}

    def send(prompt, **kwargs):
        seat_call.heard(stated)
        return prompt

    call = seat_call.SeatCall(tag={}, prompt="ok", kwargs={}, send=send)
    calls = CallState(CallPolicy(**FAST))
    assert call_all(calls, [(object(), call)], ["heard"]) == ["ok"]
    assert call.lane is lane_for(calls, "heard") and calls.limits["heard"] == (600, 60000)
    seat_call.heard(stated)  # no seat call here: nothing learns it
    plain = call_all(calls, [(object(), lambda: seat_call.heard(stated) or "plain")], ["plain"])
    assert plain == ["plain"]
    assert list(calls.limits) == ["heard"] and lane_for(calls, "plain").pace.rpm is None


def test_a_lane_without_stated_limits_halves_its_calls_in_flight_when_refused():
    lane = Lane("no-headers", CallState())
    lane.concurrency.in_flight = 40
    lane.refused(0.0)
    assert lane.concurrency.window == 20
    lane.concurrency.in_flight = 0
    for _ in range(20):
        lane.concurrency.answer(time.monotonic(), None, None)
    assert 20 < lane.concurrency.window < 22  # additive increase


def test_a_stopped_run_wakes_calls_waiting_for_the_pace():
    calls = CallState()
    lane = lane_for(calls, "paused")
    lane.pace.paused_until = float("inf")
    calls.stop("test")
    assert lane.acquire(1, lambda: False) is False


@pytest.mark.parametrize("patience,bound", [(600.0, MAX_SERVER_WAIT_S), (20.0, 20.0)])
def test_a_server_wait_past_the_ceiling_or_the_patience_is_capped_and_said_once(patience, bound, capsys):
    # the run's patience, read once with its options: the lanes it makes wait within it
    lane = lane_for(CallState(CallPolicy(rate_limit_patience_s=patience)), ("http://127.0.0.1/v1", "keyhash", "gpt-4o"))
    before = time.monotonic()
    for _ in range(3):
        lane.refused(86400.0, "retry-after")
    lane.learn({"x-ratelimit-limit-requests": "600", "x-ratelimit-remaining-requests": "0",
                "x-ratelimit-reset-requests": "24h"})
    assert lane.pace.paused_until <= time.monotonic() + bound  # not a day
    assert lane.pace.paused_until >= before + bound  # but as long as the run can afford
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1 and "86,400 s (retry-after)" in said[0] and "gpt-4o" in said[0]
    lane.refused(2.0)  # a wait within bounds is honoured as asked
    assert lane.pace.paused_until >= before + bound


def test_the_wait_is_said_with_where_the_server_said_it():
    said = server_wait_said(status_error(429, "rate_limit_exceeded", headers={"retry-after": "86400"}))
    assert said == (86400.0, "retry-after")
    reset = status_error(429, "rate_limit_exceeded", headers={"x-ratelimit-reset-tokens": "6m0s"})
    assert server_wait_said(reset) == (360.0, "x-ratelimit-reset-tokens")
