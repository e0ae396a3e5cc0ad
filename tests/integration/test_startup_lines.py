"""What stock ``oaieval`` says before the first call, with the plugin installed: one line for the
registries evals reads (it printed one per folder and kind of entry, 9 to 16 a run, and a warning
that it could not list the models without a key), and one line, with the fix, for a completion fn
of the user's whose module cannot be imported (it ended in a 12-frame traceback)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import base_env, cli, users_fn

pytestmark = pytest.mark.e2e  # every test here starts oaieval


def oaieval(fn: str, registry: Path, env: dict, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([cli("oaieval"), fn, "econarena.beauty_L", "--registry_path", str(registry),
                           "--record_path", str(tmp_path / "log.jsonl"), "--max_samples", "1"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)


def test_a_keyless_run_says_the_registries_in_one_line_and_no_credentials_warning(tmp_path):
    registry, env = users_fn(tmp_path, "mine", "self, prompt, **kwargs", '{"choice": 1}')
    assert "OPENAI_API_KEY" not in env
    proc = oaieval("mine", registry, env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    loading = [line for line in proc.stderr.splitlines() if "Loading registr" in line]
    assert len(loading) == 1, loading
    assert "evals'" in loading[0] and "econarena's" in loading[0] and str(registry) in loading[0], loading
    assert "Missing credentials" not in proc.stderr and "Could not fetch API model IDs" not in proc.stderr


def test_oaieval_debug_still_lists_each_folder(tmp_path):
    registry, env = users_fn(tmp_path, "mine", "self, prompt, **kwargs", '{"choice": 1}')
    proc = subprocess.run([cli("oaieval"), "mine", "econarena.beauty_L", "--registry_path", str(registry),
                           "--record_path", str(tmp_path / "log.jsonl"), "--max_samples", "1", "--debug"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"Loading registry from {registry / 'completion_fns'}" in proc.stderr


def test_a_fn_whose_module_is_not_on_the_path_is_one_line_with_the_fix(tmp_path):
    registry, _ = users_fn(tmp_path, "mine", "self, prompt, **kwargs", '{"choice": 1}')
    proc = oaieval("mine", registry, base_env(), tmp_path)  # the fn's folder left off PYTHONPATH
    assert proc.returncode == 2, proc.stderr[-3000:]  # exit_status.REFUSED
    said = [line for line in proc.stderr.splitlines() if not line.startswith("[")]
    assert len(said) == 1, said
    assert said[0].startswith("econarena: completion fn mine: its class mine_fn:Fn"), said
    assert "no module 'mine_fn' on the Python path" in said[0] and "PYTHONPATH" in said[0], said
    assert "Traceback" not in proc.stderr


def test_a_fn_whose_module_imports_what_is_not_installed_names_that(tmp_path):
    registry, env = users_fn(tmp_path, "mine", "self, prompt, **kwargs", '{"choice": 1}')
    module = tmp_path / "mine_fn.py"
    module.write_text("import econarena_no_such_package\n" + module.read_text())
    proc = oaieval("mine", registry, env, tmp_path)
    assert proc.returncode == 2, proc.stderr[-3000:]
    said = [line for line in proc.stderr.splitlines() if not line.startswith("[")]
    assert len(said) == 1, said
    assert "its module mine_fn imports 'econarena_no_such_package', which is not installed: pip install" in said[0]
    assert "Traceback" not in proc.stderr


RECORDING_FN = '''from evals.api import CompletionFn, CompletionResult
from evals.record import record_sampling
class R(CompletionResult):
    def get_completions(self):
        return ['{"choice": 1}']
class Fn(CompletionFn):
    def __init__(self, **kwargs):
        pass
    def __call__(self, prompt, **kwargs):
        record_sampling(prompt=prompt, sampled=['{"choice": 1}'], model="mine-v1"%s)
        return R()
'''


@pytest.mark.parametrize("usage,found", [
    (', usage={"prompt_tokens": 300, "completion_tokens": 7, "total_tokens": 307}',
     "Found 50/50 sampling events with usage data\n"),
    ("", "Found 0/50 sampling events with usage data: 50 seat call(s) recorded no token usage (the built-in "
         "players use none; a fn of your own that records its calls without usage= counts no tokens: pass "
         "usage={...} to record_sampling, docs/players.md#a-completion-fn-of-your-own-its-token-usage)\n"),
])
def test_a_fn_that_records_its_usage_has_it_counted_and_one_that_does_not_is_told_how(usage, found, tmp_path):
    registry, env = users_fn(tmp_path, "mine", "self, prompt, **kwargs", '{"choice": 1}')
    (tmp_path / "mine_fn.py").write_text(RECORDING_FN % usage)
    proc = oaieval("mine", registry, env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert found in proc.stderr, proc.stderr[-3000:]
    summary = subprocess.run([cli("econarena-summary"), str(tmp_path / "log.jsonl")], env=env, capture_output=True,
                             text=True, timeout=120)
    assert summary.returncode == 0, summary.stderr[-3000:]
    assert ("15,000" in summary.stdout) == bool(usage), summary.stdout  # 50 calls x 300 prompt tokens
