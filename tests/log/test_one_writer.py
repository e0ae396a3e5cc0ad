"""One log, one writer: a second ``oaieval`` on a ``--record_path`` that a live
run is writing is refused before any request and before the file is touched; a killed run's lock
does not outlive it."""
from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from econarena_evals.integration.status import REFUSED
from econarena_evals.log.evallog import read_log
from econarena_evals.log.filing import filing_problems

from conftest import ROOT, base_env, cli, run_cli
from openai_server import OpenAIServer
from policies import scripted

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

REGISTRY = ROOT / "registry"


class HeldServer(OpenAIServer):
    """Answers no chat request until ``release`` is set: a run against it is still running."""

    def __init__(self) -> None:
        super().__init__(scripted)
        self.release = threading.Event()

    def respond(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.release.wait(300)
        return super().respond(path, body)


def _env(server: OpenAIServer) -> dict[str, str]:
    env = base_env()
    env["OPENAI_BASE_URL"] = server.base_url
    env["OPENAI_API_KEY"] = "sk-test-local"
    return env


def _args(log: Path) -> list[str]:
    return [cli("oaieval"), "econarena/chat:gpt-4", "econarena.beauty_L", "--registry_path", str(REGISTRY),
            "--max_samples", "2", "--record_path", str(log)]


def _start_held(log: Path, held: HeldServer) -> subprocess.Popen:
    first = subprocess.Popen(_args(log), env=_env(held), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
    deadline = time.monotonic() + 240
    while not held.paths() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert held.paths() and first.poll() is None, "the first run never reached its first call"
    return first


def test_a_second_run_on_a_log_a_live_run_writes_is_refused(tmp_path):
    log = tmp_path / "one.jsonl"
    held, fast = HeldServer().start(), OpenAIServer(scripted).start()
    try:
        first = _start_held(log, held)
        before = log.read_bytes()
        second = subprocess.run(_args(log), env=_env(fast), capture_output=True, text=True, timeout=300)
        assert first.poll() is None  # the first run was still running all along
        assert second.returncode == REFUSED, second.stderr[-3000:]
        ours = [line for line in second.stderr.splitlines() if line.startswith("econarena:")]
        assert ours == [f"econarena: --record_path {log} is being written by another run that is still going: "
                        "wait for it to end, or give this run another --record_path"]
        assert "Traceback" not in second.stderr
        assert fast.paths() == []  # not a request of any kind
        assert log.read_bytes() == before  # not truncated, nothing written
        held.release.set()
        _, err = first.communicate(timeout=300)
        assert first.returncode == 0, err[-3000:]
    finally:
        held.release.set()
        held.stop()
        fast.stop()
    result = read_log(log)
    assert len(result.run_ids) == 1 and result.mixed is None
    assert len(result.sessions) == 2 and result.final_report is not None
    assert filing_problems(log) == []


def test_a_killed_run_leaves_no_lock_behind(tmp_path):
    log = tmp_path / "killed.jsonl"
    held = HeldServer().start()
    try:
        first = _start_held(log, held)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=60)
    finally:
        held.release.set()
        held.stop()
    run_cli([cli("oaieval"), "econarena/nash", "econarena.beauty_L", "--registry_path", str(REGISTRY),
             "--max_samples", "2", "--record_path", str(log)], base_env())
    assert len(read_log(log).sessions) == 2
