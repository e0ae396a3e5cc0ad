"""The inspect front end's tests (scripts/test_inspect.sh): run in the inspect venv (inspect-ai, this
package with the ``[inspect]`` extra, no evals), against the real ``inspect eval`` CLI; the evals
plugin's ``oaieval`` and ``econarena-report`` come from the project's venv, named by
``ECONARENA_EVALS_VENV``, so each test sets one front end's figures beside the other's."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Optional

from front_ends import ROOT, ctrl_c_reaches_children, evals_bin, oaieval, oaieval_sessions, run  # noqa: F401 (the tests import them here)

INSPECT_BIN = Path(sys.executable).parent


# a line per finished test file, and one after any 10 s without one (tests/file_progress.py;
# scripts/front_end_tests.sh passes --file-progress)
pytest_plugins = ["file_progress"]

def pytest_configure(config) -> None:
    ctrl_c_reaches_children()  # a test's Ctrl-C reaches what it started, however the suite was started


def inspect_eval(tasks: list[str], model: str, log_dir: Path, *extra: str,
                 env: Optional[dict[str, str]] = None) -> subprocess.CompletedProcess:
    """``inspect eval econarena_evals/<cell> ... --model MODEL``: the real CLI, logs in ``log_dir``."""
    return run([str(INSPECT_BIN / "inspect"), "eval", *[f"econarena_evals/{t}" for t in tasks], "--model", model,
                "--log-dir", str(log_dir), "--display", "plain", *extra], env=env)


def inspect_sessions(log_dir: Path, task: str) -> dict[int, dict[str, float]]:
    """session -> the scorer's figures, read from the task's log by inspect's own reader."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    logs = [read_eval_log(info) for info in list_eval_logs(str(log_dir))]
    logs = [log for log in logs if log.eval.task == task]
    assert len(logs) == 1, [log.eval.task for log in logs]
    assert logs[0].status == "success", logs[0].error
    return {int(s.id): s.scores["eas_scorer"].value for s in logs[0].samples}
