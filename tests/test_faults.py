"""Fault tests: a real local server that fails on purpose, and a port where nothing listens.

Whatever goes wrong, the final report is written, its counts add up, and the runs in the log
re-score to the reported metrics.
"""
from __future__ import annotations

import socket

import pytest
from conftest import REGISTRY, base_env, cli, run_cli
from openai_server import Faults, OpenAIServer
from policies import scripted

from econarena_evals.logs import read_log
from test_e2e import assert_rescores

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
             "--max_samples", str(samples), "--extra_eval_params", params], env, timeout=timeout)
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


@pytest.mark.parametrize("fn", ["econarena/chat:gpt-4", "gpt-4"])
def test_closed_port_errors_every_session_and_still_reports(fn, tmp_path):
    """Nothing listening. evals' own gpt-4 fn retries forever; the deadline and breaker end it."""
    env = base_env() | {"OPENAI_BASE_URL": f"http://127.0.0.1:{closed_port()}/v1", "OPENAI_API_KEY": "sk-local",
                        "EVALS_THREADS": "2"}
    # the subprocess timeout is the liveness check: a hang fails the test instead of stalling it
    log = oaieval(fn, "beauty_L", env, tmp_path / "log.jsonl", 6, f"{FAST_RETRIES},call_timeout_s=3", timeout=90)
    assert_counts_add_up(log, 6)
    assert log.final_report["errored_sessions"] == 6 and log.final_report["eas"] is None
    assert log.runs == []
    errors = {s["error"] for s in log.sessions}
    expected = "call_timeout_s=3" if fn == "gpt-4" else "APIConnectionError"
    assert any(expected in e for e in errors), errors
    # the breaker opened after the first wave, so the later sessions did not wait out a deadline each
    assert any("taken for down" in e for e in errors), errors
