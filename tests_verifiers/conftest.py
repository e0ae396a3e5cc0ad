"""The verifiers front end's tests (scripts/test_verifiers.sh): run in the verifiers venv (verifiers,
this package with the ``[verifiers]`` extra, no evals), against the real ``vf-eval`` CLI and the
real ``econarena-serve``; the evals plugin's ``oaieval`` and ``econarena-report`` come from the
project's venv, named by ``ECONARENA_EVALS_VENV``, so each test sets one front end's figures beside
the other's."""
from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator, Optional

import front_ends
from front_ends import ROOT, ctrl_c_reaches_children, evals_bin, oaieval, oaieval_sessions  # noqa: F401 (the tests import them here)

VERIFIERS_BIN = Path(sys.executable).parent
KEY_VAR = "ECONARENA_TEST_KEY"  # vf-eval's --client.api-key-var: a variable set, a key no server checks


# a line per finished test file, and one after any 10 s without one (tests/file_progress.py;
# scripts/front_end_tests.sh passes --file-progress)
pytest_plugins = ["file_progress"]

def pytest_configure(config) -> None:
    ctrl_c_reaches_children()  # a test's Ctrl-C reaches what it started, however the suite was started


def run(cmd: list[str], env: Optional[dict[str, str]] = None, timeout: float = 1200) -> subprocess.CompletedProcess:
    """``front_ends.run`` with vf-eval's key variable set."""
    return front_ends.run(cmd, {KEY_VAR: "none", **(env or {})}, timeout)


@contextlib.contextmanager
def served(player: str) -> Iterator[str]:
    """``econarena-serve PLAYER --port 0``, the real command: its base URL while the block runs."""
    proc = subprocess.Popen([str(VERIFIERS_BIN / "econarena-serve"), player, "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=str(ROOT))
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert " at http://127.0.0.1:" in line, line + (proc.stderr.read() if proc.stderr else "")
        yield line.split(" at ", 1)[1].split()[0]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


def vf_eval_command(base_url: str, model: str, out: Path, *args: str) -> list[str]:
    """``vf-eval econarena_evals -m MODEL --client.base-url URL --no-push ...``, its run in ``out``."""
    return [str(VERIFIERS_BIN / "vf-eval"), "econarena_evals", "-m", model, "--client.base-url", base_url,
            "--client.api-key-var", KEY_VAR, "--no-push", "--no-rich", "-o", str(out), *args]


def vf_eval(base_url: str, model: str, out: Path, *args: str) -> subprocess.CompletedProcess:
    """The real ``vf-eval`` CLI (``vf_eval_command``), run to its end."""
    done = run(vf_eval_command(base_url, model, out, *args))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done


def traces_file(out: Path) -> Path:
    [path] = list(out.glob("*/traces.jsonl"))
    return path


def episodes(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in traces_file(out).read_text(encoding="utf-8").splitlines() if line.strip()]


def vf_sessions(out: Path, cell: str) -> dict[int, dict[str, Any]]:
    """session -> its econarena_session record, from each episode of ``cell`` (on its first seat's trace)."""
    found = {}
    for episode in episodes(out):
        assert episode["ok"], episode.get("errors")
        infos = [t["info"]["econarena"] for t in episode["traces"]]
        [first] = [i for i in infos if "econarena_session" in i]
        if first["cell"] == cell:
            found[first["session"]] = first["econarena_session"]
    return found
