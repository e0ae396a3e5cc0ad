"""The start-up hook touches only what it must: checked in fresh interpreters of the test venv.

Subprocesses put this checkout first on PYTHONPATH, so the site-packages ``.pth`` line imports
this checkout's ``econarena_evals_hook``.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from conftest import REGISTRY, base_env, cli

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

PLACEHOLDER = "econarena-placeholder-key-not-for-openai"


def python(code: str, env: dict, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_python_m_evals_registry_runs():
    env = base_env() | {"OPENAI_API_KEY": "sk-test"}
    proc = subprocess.run([sys.executable, "-m", "evals.registry"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_reload_getsource_and_the_patch():
    proc = python("""
        import importlib, inspect, os
        import evals.registry as r
        assert type(r.__loader__).__name__ == "_Loader", type(r.__loader__)
        assert "class Registry" in inspect.getsource(r)
        importlib.reload(r)
        assert r.Registry._econarena_patched
        assert "OPENAI_API_KEY" not in os.environ  # the placeholder lived during the import only
        import econarena_evals_hook as hook
        from econarena_evals.integration import startup
        assert hook.ERRORS == [] and startup.ERRORS == [], (hook.ERRORS, startup.ERRORS)
        print("ok")
    """, base_env())
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr


def test_a_module_named_evals_registry_outside_the_evals_distribution_is_not_patched(tmp_path):
    fake = tmp_path / "evals"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "registry.py").write_text("DEFAULT_PATHS = []\n")
    env = base_env()
    env["PYTHONPATH"] = f"{tmp_path}:{env['PYTHONPATH']}"
    proc = python("""
        import evals.registry as r
        print(type(r.__loader__).__name__, r.DEFAULT_PATHS)
    """, env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["SourceFileLoader", "[]"]


def test_duplicate_entry_still_guards_unrelated_roots_and_ours_may_repeat(tmp_path):
    mine = tmp_path / "mine"
    (mine / "evals").mkdir(parents=True)
    (mine / "evals" / "mine.yaml").write_text(
        "mine.x:\n  id: mine.x.v0\nmine.x.v0:\n  class: evals.elsuite.basic.match:Match\n")
    proc = python(f"""
        from evals.registry import Registry
        try:
            Registry([{str(mine)!r}, {str(mine)!r}]).get_eval("mine.x")
        except AssertionError as exc:
            print("refused:", exc)
        ours = Registry([{str(REGISTRY)!r}, {str(REGISTRY)!r}])
        print("ours twice:", ours.get_eval("econarena.beauty_L") is not None)
    """, base_env())
    assert proc.returncode == 0, proc.stderr
    assert "refused: duplicate entry" in proc.stdout
    assert "ours twice: True" in proc.stdout


def test_no_request_ever_carries_the_placeholder_key(server):
    """Without a key: an unknown name (evals asks /v1/models), gpt-4 and a built-in player."""
    env = base_env() | {"OPENAI_BASE_URL": server.base_url}
    before = len(server.seen)
    for fn in ("my-unknown-model", "gpt-4", "econarena/nash"):
        subprocess.run([cli("oaieval"), fn, "econarena.beauty_L", "--max_samples", "1", "--registry_path",
                        str(REGISTRY), "--record_path", "/dev/null"], env=env, capture_output=True, text=True,
                       timeout=120)
    keyless = server.seen[before:]
    assert not any(PLACEHOLDER in (auth or "") for _, _, auth in keyless), keyless
    # the capture works: with a key, the key is what the endpoint sees
    env["OPENAI_API_KEY"] = "sk-visible"
    subprocess.run([cli("oaieval"), "my-unknown-model", "econarena.beauty_L", "--max_samples", "1",
                    "--registry_path", str(REGISTRY), "--record_path", "/dev/null"], env=env,
                   capture_output=True, text=True, timeout=120)
    assert ("GET", "/v1/models", "Bearer sk-visible") in server.seen


def test_the_doctor_says_where_the_registry_is():
    proc = subprocess.run([sys.executable, "-m", "econarena_evals.integration.doctor"], env=base_env(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "evals: 3.0.1.post1" in proc.stdout and "OPENAI_API_KEY: not set" in proc.stdout
    assert "EconArena registry on evals' default paths: /" in proc.stdout
    assert "hook errors: none" in proc.stdout
