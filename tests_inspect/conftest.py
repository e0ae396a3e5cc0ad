"""The inspect front end's tests (scripts/test_inspect.sh): run in the inspect venv (inspect-ai, this
package with the ``[inspect]`` extra, no evals), against the real ``inspect eval`` CLI; the evals
plugin's ``oaieval`` and ``econarena-report`` come from the project's venv, named by
``ECONARENA_EVALS_VENV``, so each test sets one front end's figures beside the other's."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSPECT_BIN = Path(sys.executable).parent


def evals_bin() -> Path:
    venv = os.environ.get("ECONARENA_EVALS_VENV")
    if not venv or not (Path(venv) / "bin" / "oaieval").exists():
        pytest.fail("ECONARENA_EVALS_VENV must name the project's venv (bash scripts/setup.sh makes it): "
                    "these tests compare both front ends")
    return Path(venv) / "bin"


def run(cmd: list[str], env: Optional[dict[str, str]] = None, timeout: float = 900) -> subprocess.CompletedProcess:
    """A command, its output kept; never raises on a non-zero exit (the test looks at it)."""
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    return subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=timeout, cwd=str(ROOT))


def inspect_eval(tasks: list[str], model: str, log_dir: Path, *extra: str,
                 env: Optional[dict[str, str]] = None) -> subprocess.CompletedProcess:
    """``inspect eval econarena_evals/<cell> ... --model MODEL``: the real CLI, logs in ``log_dir``."""
    return run([str(INSPECT_BIN / "inspect"), "eval", *[f"econarena_evals/{t}" for t in tasks], "--model", model,
                "--log-dir", str(log_dir), "--display", "plain", *extra], env=env)


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


def inspect_sessions(log_dir: Path, task: str) -> dict[int, dict[str, float]]:
    """session -> the scorer's figures, read from the task's log by inspect's own reader."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    logs = [read_eval_log(info) for info in list_eval_logs(str(log_dir))]
    logs = [log for log in logs if log.eval.task == task]
    assert len(logs) == 1, [log.eval.task for log in logs]
    assert logs[0].status == "success", logs[0].error
    return {int(s.id): s.scores["eas_scorer"].value for s in logs[0].samples}
