"""The test command's progress lines (tests/file_progress.py, ``--file-progress``): a line per finished
test file, and a line naming the files under way after a quiet stretch, under pytest-xdist as
``scripts/test.sh`` runs it (``-q -n 3 --dist loadfile``) and in one process. A pytest session of
its own on two test files in tmp_path; its slow test waits until a quiet-stretch line was printed."""
from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from conftest import ROOT, base_env

pytestmark = pytest.mark.e2e  # every test here starts a pytest process

FILES = {
    "test_a.py": "def test_1():\n    pass\n\ndef test_2():\n    pass\n",
    # waits (at most 120 s, a hang guard) until the outer test saw a line naming this file under way
    "test_b.py": ("import pathlib, time\n\ndef test_1():\n    release = pathlib.Path(__file__).with_name('release')\n"
                  "    for _ in range(1200):\n        if release.exists():\n            return\n"
                  "        time.sleep(0.1)\n    raise AssertionError('no progress line named test_b.py as running')\n\n"
                  "def test_2():\n    pass\n\ndef test_3():\n    pass\n"),
}


@pytest.mark.parametrize("workers", [["-n", "2", "--dist", "loadfile"], ["-n", "0"]])
def test_each_finished_file_and_each_quiet_stretch_is_a_line(workers, tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    env = base_env() | {"PYTHONPATH": str(ROOT / "tests")}
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "file_progress", "--file-progress",
                             "--file-progress-every", "0.5", "-q", "-p", "no:cacheprovider",
                             # the files in their order (the lines below count test_b.py last), whatever
                             # order the outer suite runs in
                             "-p", "no:randomly", *workers, str(tmp_path)],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    guard = threading.Timer(300, proc.kill)  # a hang guard, not a timed check
    guard.start()
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("progress: ") and "running test_b.py (" in line:
                (tmp_path / "release").touch()
        proc.wait()
    finally:
        guard.cancel()
    out = "\n".join(lines)
    assert proc.returncode == 0, out
    said = [line for line in lines if line.startswith("progress: ")]
    assert any(line.startswith("progress: test_a.py done (2 tests, 0 failed): ") for line in said), out
    done_b = [line for line in said if line.startswith("progress: test_b.py done (3 tests, 0 failed): ")]
    assert len(done_b) == 1 and ": 5/5 tests, 2/2 files, " in done_b[0], out
    assert (tmp_path / "release").exists()  # a quiet stretch was said, naming the file under way
    assert not [line for line in lines if "progress: " in line and not line.startswith("progress: ")], out
