"""The supported Pythons are claimed in one range everywhere, pinned for each, and others refused."""
from __future__ import annotations

import re
import subprocess

import pytest
from packaging.requirements import Requirement

from conftest import ROOT

SETUP_SH = (ROOT / "scripts" / "setup.sh").read_text()
MIN, MAX = re.search(r"^MIN=3\.(\d+) MAX=3\.(\d+)$", SETUP_SH, re.M).groups()
SUPPORTED = [f"3.{m}" for m in range(int(MIN), int(MAX) + 1)]


def test_setup_py_and_readme_claim_the_range_setup_sh_accepts():
    setup_py = (ROOT / "setup.py").read_text()
    assert f'python_requires=">=3.{MIN}, <3.{int(MAX) + 1}"' in setup_py
    assert f"range({MIN}, {int(MAX) + 1})" in setup_py  # the per-version classifiers
    readme = (ROOT / "README.md").read_text()
    assert f"Python 3.{MIN} to 3.{MAX}" in readme
    assert "Python 3.9+" not in readme


@pytest.mark.parametrize("python", SUPPORTED)
def test_constraints_pin_every_package_once_on_each_supported_python(python):
    pins: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        req = Requirement(line)
        spec = str(req.specifier)
        assert spec.startswith("==") and "," not in spec, line
        if req.marker is not None:
            assert set(re.findall(r"[a-z_]+(?= *[<>=!])", str(req.marker))) == {"python_version"}, line
            if not req.marker.evaluate({"python_version": python}):
                continue
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        assert name not in pins, f"{name} pinned twice for Python {python}"
        pins[name] = spec
    runtime = ["openai", "pyyaml", "numpy", "tqdm", "backoff", "tiktoken", "blobfile", "termcolor", "lz4",
               "zstandard", "evals", "pytest", "hypothesis", "matplotlib"]
    assert [n for n in runtime if n not in pins] == []


@pytest.mark.parametrize("version", ["2.7", "3.8", f"3.{int(MAX) + 1}"])
@pytest.mark.e2e
def test_setup_sh_refuses_an_unsupported_python_in_one_line(tmp_path, version):
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\necho {version}\n")
    fake.chmod(0o755)
    venv = tmp_path / "venv"
    proc = subprocess.run(["bash", "scripts/setup.sh"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "PYTHON": str(fake), "VENV": str(venv)})
    assert proc.returncode != 0
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert f"Python {version} ({fake}) is not supported; use Python 3.{MIN} to 3.{MAX}" in proc.stderr
    assert not venv.exists()
