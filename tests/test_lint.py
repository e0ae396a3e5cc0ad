"""ruff's rules (ruff.toml) hold over the package, the tests, the benchmarks and the scripts:
import blocks sorted (rule I), no unused imports or names, no undefined names."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.e2e  # every test here starts a process or a server


def test_ruff_finds_nothing():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
                           "--select", "I,F", "econarena_evals", "econarena_evals_hook.py", "tests", "tests_inspect",
                           "tests_verifiers", "bench",
                           "scripts"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
