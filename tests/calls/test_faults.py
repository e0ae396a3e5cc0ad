"""Fault tests: a real local server that fails on purpose, and a port where nothing listens.

Whatever goes wrong, the final report is written, its counts add up, and the runs in the log
re-score to the reported metrics.
"""
from __future__ import annotations

import socket
import time

import pytest
from test_e2e import assert_rescores

from econarena_evals.log.evallog import read_log

from conftest import ERRORED, REGISTRY, base_env, cli, run_cli, users_fn
from openai_server import Faults, OpenAIServer
from policies import scripted

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

FAST_RETRIES = "backoff_base_s=0.02,backoff_cap_s=0.1"


@pytest.fixture(scope="module")
def faulty_server():
    srv = OpenAIServer(scripted, models=("gpt-4",),
                       faults=Faults(http_500=0.2, http_429=0.1, truncated=0.05, slow=0.05, slow_s=0.2, seed=3)).start()
    yield srv
    srv.stop()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def oaieval(fn: str, cell: str, env: dict, log, samples: int, params: str, timeout: float = 240):
    run_cli([cli("oaieval"), fn, f"econarena.{cell}", "--registry_path", str(REGISTRY), "--record_path", str(log),
             "--max_samples", str(samples), "--extra_eval_params", params], env, timeout=timeout,
            returncode=(0, ERRORED))  # whether a fault errors a session is the test's to check
    return read_log(log)


def assert_counts_add_up(log, samples: int) -> None:
    report = log.final_report
    assert report is not None, log.problems
    assert report["sessions"] + report["errored_sessions"] == samples
    assert len(log.sessions) == samples
    assert sum(s["errored"] for s in log.sessions) == report["errored_sessions"]
    for s in log.sessions:
        assert (s["error"] is not None) == s["errored"]
        assert (s["eas"] is None) == s["errored"]


@pytest.mark.parametrize("cell", ["beauty_L", "beauty_hist"])
def test_flaky_server_500_429_truncated_slow(cell, faulty_server, tmp_path):
    env = base_env() | {"OPENAI_BASE_URL": faulty_server.base_url, "OPENAI_API_KEY": "sk-local"}
    before = dict(faulty_server.injected)
    log = oaieval("econarena/chat:gpt-4", cell, env, tmp_path / "log.jsonl", 4, f"{FAST_RETRIES},max_attempts=10")
    injected = {k: faulty_server.injected[k] - before[k] for k in before}
    assert all(n > 0 for n in injected.values()), injected  # every kind of fault really happened
    assert_counts_add_up(log, 4)
    # ten attempts at a 35 % failure rate: a call fails for good about once in 36,000, so a lost
    # session is rare and two would mean the retries are not working
    assert log.final_report["sessions"] >= 3
    assert_rescores(log)


@pytest.fixture(scope="module")
def always_500():
    srv = OpenAIServer(scripted, models=("gpt-4",), faults=Faults(http_500=1.0)).start()
    yield srv
    srv.stop()


def full_cell(fn: str, eval_name: str, base_url: str, log, params: str = "call_timeout_s=10"):
    """A whole cell at the default EVALS_THREADS and the default retry policy, as a user runs it."""
    env = base_env() | {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-local"}
    # the subprocess timeout is the liveness check: a hang fails the test instead of stalling it
    proc = run_cli([cli("oaieval"), fn, eval_name, "--registry_path", str(REGISTRY), "--record_path", str(log),
                    "--extra_eval_params", params], env, timeout=120, returncode=ERRORED)
    return read_log(log), proc


def assert_all_errored_loudly(log, proc, samples: int) -> None:
    assert_counts_add_up(log, samples)
    assert log.final_report["errored_sessions"] == samples and log.final_report["eas"] is None
    assert log.runs == []
    assert f"econarena: {samples} of {samples} session(s)" in proc.stderr and "first: session" in proc.stderr


@pytest.mark.parametrize("fn", ["econarena/chat:gpt-4", "gpt-4"])
def test_closed_port_ends_a_full_dev_cell(fn, tmp_path):
    """Nothing listening, 20 sessions at the default 10 threads: retried, then every session errored."""
    log, proc = full_cell(fn, "econarena.beauty_L", f"http://127.0.0.1:{closed_port()}/v1", tmp_path / "log.jsonl")
    assert_all_errored_loudly(log, proc, 20)
    errors = {s["error"] for s in log.sessions}
    assert any("APIConnectionError" in e for e in errors), errors
    # the breaker opened after the first failures, so later calls were refused without a try
    assert any("presumed down" in e for e in errors), errors


@pytest.mark.parametrize("fn,eval_name,samples", [
    ("gpt-4", "econarena.beauty_L", 20),
    ("econarena/chat:gpt-4", "econarena.beauty_L", 20),
    ("gpt-4", "econarena.beauty_L.test.v0", 100),
])
def test_always_500_ends_a_full_cell_within_the_request_bound(fn, eval_name, samples, always_500, tmp_path):
    before = len(always_500.requests)
    log, proc = full_cell(fn, eval_name, always_500.base_url, tmp_path / "log.jsonl")
    sent = len(always_500.requests) - before
    assert_all_errored_loudly(log, proc, samples)
    calls, max_attempts = samples * 50, 4
    assert 0 < sent <= calls * max_attempts, sent
    assert any("InternalServerError" in s["error"] for s in log.sessions)
    # nothing keeps retrying once oaieval has exited
    settled = len(always_500.requests)
    time.sleep(1.5)
    assert len(always_500.requests) == settled


def test_a_completion_fn_that_rejects_keywords_says_so(tmp_path):
    """A custom fn with __call__(self, prompt): the session error names the problem, not the endpoint."""
    registry, env = users_fn(tmp_path, "narrow", "self, prompt", '{"choice": 0}')
    log = tmp_path / "log.jsonl"
    run_cli([cli("oaieval"), "narrow", "econarena.beauty_L", "--registry_path", str(registry),
             "--record_path", str(log), "--max_samples", "2"], env, timeout=120, returncode=ERRORED)
    errors = [s["error"] for s in read_log(log).sessions]
    assert len(errors) == 2 and all("unexpected keyword argument" in e and "**kwargs" in e for e in errors), errors
    # the first run's first seat, counted from 1 as the prompts, the report and the stop line count them
    assert all(e.startswith("run 1 seat 1: TypeError") for e in errors), errors
    assert not any("presumed down" in e for e in errors)
