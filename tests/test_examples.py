"""The README's commands for a CompletionFn of your own, run exactly as written."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from econarena_evals.log.evallog import read_log

from conftest import ROOT, base_env

pytestmark = pytest.mark.e2e  # every test here starts a process or a server


def readme_block(marker: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text[text.index(marker):]
    return re.search(r"```bash\n(.*?)```", after, re.DOTALL).group(1)


def test_custom_completion_fn_commands_from_the_readme(tmp_path):
    commands = readme_block("<!-- custom-fn-commands -->")
    # run from a copy of the repository's root as the README says, writing runs/ into tmp_path
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = base_env()
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env["PATH"]])
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", commands], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    self_play = read_log(tmp_path / "runs/my-fn/beauty_L.jsonl")
    arena = read_log(tmp_path / "runs/my-fn/beauty_L_vs_nash.jsonl")
    for log, mine_per_session in ((self_play, 50), (arena, 10)):
        report = log.final_report
        assert report is not None and report["sessions"] == 20 and report["errored_sessions"] == 0
        # one sampling event per seat call: the fn recorded its own
        sampling = [line for line in open(log.path) if '"type": "sampling"' in line]
        assert len(sampling) == 20 * 50
        mine = sum(1 for r in log.runs for s in r["seats"] if s["player"] == "my/third-of-range")
        assert mine == 20 * mine_per_session
    assert arena.players[:2] == ["my/third-of-range", "econarena/nash"]
    assert "my/third-of-range" in proc.stdout  # the summary lists it
