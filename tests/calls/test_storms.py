"""Storms: an overloaded endpoint is waited out, a flaky one retried while it lives, a dead one still
given up on in time (docs/reliability.md's retry table).

In-process against ``call_all`` with calls that raise what the openai client raises; end to end
through the real ``oaieval`` against tests/openai_server.py answering as an overloaded provider
(``Storm``) or a gateway that fails a share of requests (``Faults``).
"""
from __future__ import annotations

import collections
import json
import subprocess
import threading
import time
from pathlib import Path

import openai
import pytest
from test_providers import refusal

from econarena_evals.calls.dispatch import call_all
from econarena_evals.calls.errors import fatal, is_endpoint_failure, is_overloaded, is_rate_limited, is_transient
from econarena_evals.calls.pace import PROBE_EVERY_S, Pace
from econarena_evals.calls.policy import CallPolicy
from econarena_evals.calls.retry import LIVE_SHARE
from econarena_evals.calls.state import CallState
from econarena_evals.log.evallog import read_log
from econarena_evals.log.filing import filing_problems
from econarena_evals.log.format import SEAT_TAG

from conftest import REGISTRY, base_env, cli
from openai_server import OVERLOAD_BODIES, Faults, OpenAIServer, Storm
from policies import scripted

FAST = dict(backoff_base_s=0.001, backoff_cap_s=0.002)


@pytest.mark.parametrize("shape", sorted(OVERLOAD_BODIES))
def test_each_provider_s_overload_is_a_wait_never_a_failure_of_the_endpoint(shape):
    exc = refusal(*OVERLOAD_BODIES[shape])
    assert is_overloaded(exc) and is_transient(exc)
    assert not is_endpoint_failure(exc) and not is_rate_limited(exc) and fatal(exc) is None
    # a plain 500 is no overload: a try, and the breaker counts it
    plain = refusal(500, {"error": {"message": "boom", "type": "server_error"}})
    assert not is_overloaded(plain) and is_endpoint_failure(plain)


def test_an_overload_is_waited_out_without_costing_a_try():
    tries = []

    def call():
        tries.append(1)
        if len(tries) <= 3:
            raise refusal(*OVERLOAD_BODIES["anthropic"])
        return "ok"

    # one try per call: three overloads before the answer cost none of it
    calls = CallState(CallPolicy(max_attempts=1, **FAST))
    assert call_all(calls, [(object(), call)]) == ["ok"] and len(tries) == 4
    assert calls.stop_reason is None
    [lane] = calls.lanes.values()
    assert lane.pace.overloads == 0  # the answer ended the overload: the lane sends freely again


def test_while_overloaded_the_lane_sends_one_probe_at_a_time():
    overloaded_until = time.monotonic() + 0.6
    lock, in_flight, most, sent_during = threading.Lock(), [0], [0], [0]

    def call():
        with lock:
            in_flight[0] += 1
            if time.monotonic() < overloaded_until:
                sent_during[0] += 1
                most[0] = max(most[0], in_flight[0])
        try:
            time.sleep(0.01)
            if time.monotonic() < overloaded_until:
                raise refusal(*OVERLOAD_BODIES["openai"])
            return "ok"
        finally:
            with lock:
                in_flight[0] -= 1

    player = object()
    calls = CallState(CallPolicy(max_attempts=1, backoff_base_s=0.05))
    results = call_all(calls, [(player, call) for _ in range(40)])
    assert results == ["ok"] * 40 and calls.stop_reason is None
    # the opening burst (the lane's slow start: 8) is refused once each; then one probe per pause
    assert sent_during[0] <= 8 + 12, sent_during[0]


def test_an_overload_that_never_ends_stops_the_run_after_the_patience():
    def call():
        raise refusal(*OVERLOAD_BODIES["google"])

    tries = []

    def counted():
        tries.append(1)
        return call()

    calls = CallState(CallPolicy(rate_limit_patience_s=0.5, backoff_base_s=0.05))
    results = call_all(calls, [(object(), counted)])
    assert isinstance(results[0], openai.InternalServerError) and calls.stop_word == "overloaded"
    assert "rate_limit_patience_s=0.5" in calls.stop_reason and "resume" in calls.stop_reason
    assert len(tries) > 1  # probed again, not given up at the first overload (the time is bench/storms.py's)


def test_a_call_that_fails_while_its_lane_answers_others_gets_more_tries_but_ends():
    """A request that always fails, on an endpoint that answers every other call: LIVE_SHARE times
    max_attempts tries, then it fails. The same request on an endpoint that answers nothing:
    max_attempts tries, as a dead endpoint always had."""
    tries = []
    stop = threading.Event()

    crash = refusal(500, {"error": {"message": "this prompt crashes the gateway", "type": "server_error"}})

    def doomed():
        tries.append(1)
        time.sleep(0.005)
        raise openai.InternalServerError("crash", response=crash.response, body=crash.body)

    def healthy():
        while not stop.is_set():  # keeps answering while the doomed call retries
            time.sleep(0.002)
            return "ok"
        return "ok"

    player = object()
    policy = CallPolicy(max_attempts=3, **FAST)
    others = [(player, healthy) for _ in range(300)]
    results = call_all(CallState(policy), [(player, doomed)] + others)
    assert isinstance(results[0], openai.InternalServerError) and results[1:] == ["ok"] * 300
    assert 3 < len(tries) <= 3 * LIVE_SHARE
    tries.clear()
    [result] = call_all(CallState(policy), [(object(), doomed)])  # a run of its own: no lane that answers others
    assert isinstance(result, openai.InternalServerError) and len(tries) == 3


def test_a_gateway_that_fails_a_quarter_of_requests_costs_no_call():
    import random

    draws = random.Random(7)
    lock = threading.Lock()
    failed = refusal(500, {"error": {"message": "bad gateway", "type": "server_error"}})

    def call():
        with lock:
            fail = draws.random() < 0.25
        time.sleep(0.001)
        if fail:
            raise openai.InternalServerError("bad gateway", response=failed.response, body=failed.body)
        return "ok"

    player = object()
    results = call_all(CallState(CallPolicy(**FAST)), [(player, call) for _ in range(2000)])
    assert results == ["ok"] * 2000


# ---- end to end: the real oaieval against an overloaded or flaky stand-in ----


def oaieval(server: OpenAIServer, cell: str, log: Path, *extra: str, timeout: float = 600):
    env = base_env() | {"OPENAI_API_KEY": "sk-storm-test", "OPENAI_BASE_URL": server.base_url}
    return subprocess.run([cli("oaieval"), "econarena/chat:claude-sonnet-4-5", f"econarena.{cell}",
                           "--registry_path", str(REGISTRY), "--record_path", str(log), *extra],
                          env=env, capture_output=True, text=True, timeout=timeout)


def sessions_in(log: Path) -> dict[int, dict]:
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return {r["data"]["session"]: r["data"] for r in rows if r.get("type") == "econarena_session"}


@pytest.mark.e2e
def test_an_overload_storm_mid_run_costs_no_session_and_few_requests(tmp_path):
    """A whole dev cell of beauty_hist (20 sessions, 1,000 seat calls) with Anthropic's 529 to
    every request for 20 s from 2 s in (bench/storms.py plays the 90 s storm)."""
    storm = Storm(after_s=2.0, for_s=20.0, shape="anthropic")
    server = OpenAIServer(scripted, models=("claude-sonnet-4-5",), answer=storm, latency_s=0.02).start()
    try:
        proc = oaieval(server, "beauty_hist", tmp_path / "log.jsonl")
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert storm.refused > 0 and "is overloaded: waiting" in proc.stderr
    sessions = sessions_in(tmp_path / "log.jsonl")
    assert len(sessions) == 20 and all(not s.get("error") for s in sessions.values())
    report = read_log(tmp_path / "log.jsonl").final_report
    assert report["sessions"] == 20 and report["errored_sessions"] == 0
    answered = sum(r.get("answered", False) for r in server.requests)
    assert answered == 1000 and len(server.requests) <= 1.3 * 1000
    assert filing_problems(tmp_path / "log.jsonl") == []


@pytest.mark.e2e
def test_an_overload_from_the_first_request_is_waited_out(tmp_path):
    storm = Storm(after_s=0.0, for_s=8.0, shape="openai")
    server = OpenAIServer(scripted, models=("claude-sonnet-4-5",), answer=storm).start()
    try:
        proc = oaieval(server, "beauty_L", tmp_path / "log.jsonl", "--max_samples", "5")
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr[-3000:]
    sessions = sessions_in(tmp_path / "log.jsonl")
    assert len(sessions) == 5 and all(not s.get("error") for s in sessions.values())
    assert storm.refused > 0


def test_an_overloaded_lane_probes_every_few_seconds_whatever_the_backoff_cap():
    """Backing off to backoff_cap_s (20 s) between probes lost whole open windows of an endpoint
    overloaded 12 s of every 20: the lane found each overload over up to 20 s late."""
    pace = Pace(("https://api.example", "key", "claude-sonnet-4-5"), 600.0, {})
    pace.told_overloaded = True  # said once per lane; not what this test reads
    pauses = []
    for _ in range(12):  # twelve refused probes in a row
        pace.paused_until = 0.0  # each refusal comes after the last pause ended
        now = time.monotonic()
        assert pace.overloaded(None, "", 1.0, 20.0)
        pauses.append(pace.paused_until - now)
    assert pauses[0] <= 1.0 + 0.01  # backoff from backoff_base_s ...
    assert all(p <= PROBE_EVERY_S + 0.01 for p in pauses) and pauses[-1] >= PROBE_EVERY_S / 2  # ... to 2 s


@pytest.mark.e2e
def test_an_endpoint_overloaded_12_s_of_every_20_answers_every_call_and_errors_no_session(tmp_path):
    """Anthropic's 529 12 s of every 20 from the first request, on a server that serves 20 calls a
    second (2 slots, 0.1 s each): 4 sessions (200 calls) need more than one open window, so calls
    refused mid-run wait for the next one, and none counts as errored. How long it takes is
    bench/storms.py's (case windows); here a timeout only guards against a hang."""
    storm = Storm(after_s=0.0, for_s=12.0, shape="anthropic", every_s=20.0)
    server = OpenAIServer(scripted, models=("claude-sonnet-4-5",), answer=storm, slots=2, decode_s=0.1).start()
    try:
        proc = oaieval(server, "beauty_L", tmp_path / "log.jsonl", "--max_samples", "4", timeout=600)
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr[-3000:]
    sessions = sessions_in(tmp_path / "log.jsonl")
    assert len(sessions) == 4 and all(not s.get("error") for s in sessions.values())
    assert read_log(tmp_path / "log.jsonl").final_report["errored_sessions"] == 0
    calls = collections.Counter(r["data"][SEAT_TAG]["session"]
                                for r in map(json.loads, (tmp_path / "log.jsonl").read_text().splitlines())
                                if r.get("type") == "sampling")
    assert calls == {session: 50 for session in sessions}  # every call answered, once, in its own session
    answered = [r for r in server.requests if r.get("answered")]
    assert len(answered) == 200 and storm.refused > 0
    first = server.requests[0]["t"]
    windows = {int((r["done"] - first) // 20) for r in answered}
    assert len(windows) >= 2, windows  # refused mid-run, and back in a later open window
    assert filing_problems(tmp_path / "log.jsonl") == []


@pytest.mark.e2e
def test_an_overload_that_never_ends_is_a_resumable_stop_after_the_patience(tmp_path):
    storm = Storm(after_s=0.0, for_s=float("inf"), shape="google")
    server = OpenAIServer(scripted, models=("claude-sonnet-4-5",), answer=storm).start()
    try:
        proc = oaieval(server, "beauty_L", tmp_path / "log.jsonl", "--max_samples", "3",
                       "--extra_eval_params", "rate_limit_patience_s=6")
    finally:
        server.stop()
    assert proc.returncode == 4, proc.stderr[-3000:]
    assert "econarena: stopped: overloaded (503/529): no answer from this endpoint for rate_limit_patience_s=6s" \
        in proc.stderr
    assert "resume_from=" in proc.stderr and "Traceback" not in proc.stderr
    # refusals are probes, one at a time: far fewer than the calls waiting
    assert storm.refused < 60, storm.refused  # how long it took is bench/storms.py's figure


@pytest.mark.e2e
@pytest.mark.parametrize("cell", ["beauty_L", "beauty_hist"])
def test_a_quarter_of_requests_answered_500_costs_no_session_over_a_whole_dev_cell(cell, tmp_path):
    server = OpenAIServer(scripted, models=("claude-sonnet-4-5",), faults=Faults(http_500=0.25, seed=11)).start()
    try:
        proc = oaieval(server, cell, tmp_path / "log.jsonl")
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert server.injected["500"] > 200  # a quarter of about 1,300 requests
    sessions = sessions_in(tmp_path / "log.jsonl")
    assert len(sessions) == 20 and all(not s.get("error") for s in sessions.values())
    assert filing_problems(tmp_path / "log.jsonl") == []
