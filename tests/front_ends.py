"""What the tests of every front end share (tests_inspect/, tests_verifiers/): the evals plugin's side
of each comparison, run from the project's venv named by ``ECONARENA_EVALS_VENV``, and the check that
two front ends' sessions hold the same figures."""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
from pathlib import Path
from typing import Any, Mapping, Optional

import pytest

ROOT = Path(__file__).resolve().parent.parent
METRICS = ("eas", "rationality", "ne_proximity", "win_rate", "rule_following", "convergence")


def ctrl_c_reaches_children() -> None:
    """Ctrl-C (SIGINT) reaches the processes the tests start, as at a terminal. A suite started as a
    background job of a non-interactive shell (``cmd &``, nohup, a CI runner's) inherits SIGINT ignored,
    its children inherit that, and a server that keeps an ignored SIGINT ignored (as a background job
    should) never stops on the SIGINT a test sends it. A handler of this process's own is not inherited:
    its children start with SIGINT at its default."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def evals_bin() -> Path:
    venv = os.environ.get("ECONARENA_EVALS_VENV")
    if not venv or not (Path(venv) / "bin" / "oaieval").exists():
        pytest.fail("ECONARENA_EVALS_VENV must name the project's venv (bash scripts/setup.sh makes it): "
                    "these tests compare both front ends")
    return Path(venv) / "bin"


def run(cmd: list[str], env: Optional[dict[str, str]] = None, timeout: float = 1200) -> subprocess.CompletedProcess:
    """A command, its output kept; never raises on a non-zero exit (the test looks at it)."""
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    return subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=timeout, cwd=str(ROOT))


def oaieval(model: str, cell: str, record_path: Path, env: Optional[dict[str, str]] = None,
            *extra: str) -> subprocess.CompletedProcess:
    done = run([str(evals_bin() / "oaieval"), model, f"econarena.{cell}", "--record_path", str(record_path),
                *extra], env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def oaieval_sessions(path: Path) -> dict[int, dict[str, Any]]:
    """session -> its econarena_session event, from an oaieval log."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("type") == "econarena_session":
            out[row["data"]["session"]] = row["data"]
    return out


def assert_same_figures(ours: Mapping[int, Mapping[str, Any]], theirs: Mapping[int, Mapping[str, Any]], cell: str,
                        sessions: int = 20) -> None:
    """The six figures of every session equal (to float rounding) under oaieval (``ours``) and another front end."""
    assert sorted(ours) == sorted(theirs) and len(ours) == sessions
    for session, event in ours.items():
        assert not event["errored"]
        for metric in METRICS:
            assert math.isclose(event[metric], theirs[session][metric], abs_tol=1e-12), (cell, session, metric)


def assert_kept_to_300_a_minute(limiter: Any, sessions: int) -> None:
    """``sessions`` beauty_L sessions (10 runs, 5 seats) played at a stated 300 requests/min: every
    call answered, at most 1.1 requests a call."""
    calls = sessions * 10 * 5
    assert limiter.answered == calls
    print(f"300 requests/min: {limiter.count} requests for {calls} calls, {limiter.refused} refused")
    assert limiter.count <= 1.1 * calls
