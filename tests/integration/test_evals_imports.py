"""The lean install (evals without its optional dependencies) must cover every evals import we use."""
import importlib
import subprocess
import sys

import pytest

from conftest import base_env

EVALS_MODULES = [
    "evals", "evals.api", "evals.eval", "evals.record", "evals.base", "evals.registry",
    "evals.completion_fns.openai", "evals.prompt.base", "evals.cli.oaieval", "evals.cli.oaievalset",
]


def test_every_evals_module_we_use_imports():
    for name in EVALS_MODULES:
        importlib.import_module(name)


@pytest.mark.e2e
def test_every_plugin_module_imports_without_an_api_key():
    code = "; ".join(f"import {m}" for m in [
        "econarena_evals.run.eval", "econarena_evals.fns.players", "econarena_evals.report.summary", "econarena_evals.log.evallog"])
    env = base_env()
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
