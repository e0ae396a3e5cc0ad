"""``pip install -e .`` (evals' own advice for anyone writing evals) gives the product a regular
install gives: in a fresh venv holding evals (``--no-deps``, as scripts/setup.sh installs it) and
this checkout installed editable, and nothing on PYTHONPATH, the stock ``oaieval`` finds the
registry without ``--registry_path`` and exits with the documented statuses."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, USER_SETTINGS

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

EGG_INFO = ROOT / "econarena_evals.egg-info"  # what setuptools leaves in the checkout for an editable install


def _pip(venv: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith(USER_SETTINGS)}
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "-q",
                           "install", "-c", str(ROOT / "constraints.txt"), *args],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


@pytest.fixture(scope="module")
def editable_venv(tmp_path_factory) -> Path:
    venv = tmp_path_factory.mktemp("editable") / "v"
    had_egg_info = EGG_INFO.exists()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    _pip(venv, "--no-deps", "evals==3.0.1.post1")
    _pip(venv, "-e", str(ROOT))  # the lean runtime comes with it, as setup.py's install_requires
    yield venv
    if not had_egg_info:
        shutil.rmtree(EGG_INFO, ignore_errors=True)


def _oaieval(venv: Path, home: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """The venv's stock oaieval with an environment that holds no PYTHONPATH: the checkout is
    reached only through the editable install."""
    home.mkdir(exist_ok=True)  # a HOME of its own: no ~/.evals registry to lean on
    clean = {"PATH": f"{venv / 'bin'}{os.pathsep}/usr/bin:/bin", "HOME": str(home), "EVALS_SHOW_EVAL_PROGRESS": "",
             **env}
    return subprocess.run([str(venv / "bin" / "oaieval"), *args], env=clean, cwd=home, capture_output=True,
                          text=True, timeout=300)


def _events(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when this returns: nothing listens there


def test_the_package_is_the_checkout_and_the_start_up_line_is_installed(editable_venv):
    proc = subprocess.run([str(editable_venv / "bin" / "python"), "-c",
                           "import econarena_evals, econarena_evals_hook; print(econarena_evals.__file__)"],
                          env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()) == ROOT / "econarena_evals" / "__init__.py"
    pth = list((editable_venv / "lib").glob("python*/site-packages/econarena_evals_registry.pth"))
    assert len(pth) == 1 and "econarena_evals_hook.install()" in pth[0].read_text()


def test_oaieval_finds_the_registry_without_registry_path(editable_venv, tmp_path):
    log = tmp_path / "nash.jsonl"
    proc = _oaieval(editable_venv, tmp_path / "home", "econarena/nash", "econarena.beauty_L", "--record_path", str(log))
    assert proc.returncode == 0, proc.stderr[-3000:]
    events = _events(log)
    assert any("final_report" in e for e in events)
    sessions = [e for e in events if e.get("type") == "econarena_session"]
    assert len(sessions) == 20 and not any(e["data"].get("error") for e in sessions)


def test_a_run_whose_sessions_error_exits_3(editable_venv, tmp_path):
    log = tmp_path / "dead.jsonl"
    proc = _oaieval(editable_venv, tmp_path / "home", "econarena/chat:gpt-4o", "econarena.beauty_L", "--max_samples",
                    "1", "--record_path", str(log), OPENAI_BASE_URL=f"http://127.0.0.1:{_closed_port()}/v1",
                    OPENAI_API_KEY="sk-x")
    assert proc.returncode == 3, proc.stderr[-3000:]  # econarena_evals.integration.status.ERRORED
    sessions = [e for e in _events(log) if e.get("type") == "econarena_session"]
    assert len(sessions) == 1 and sessions[0]["data"].get("error"), sessions
