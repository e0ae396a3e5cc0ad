"""The README's commands for a CompletionFn of your own, run exactly as written."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from econarena_evals.log.evallog import read_log

from conftest import ROOT, base_env, cli

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


USAGE_FN = '''
import json
from types import SimpleNamespace

from evals.api import CompletionFn, CompletionResult
from evals.record import record_sampling

from econarena_evals.games import read_prompt


class Reply(CompletionResult):
    def __init__(self, text):
        self.text = text

    def get_completions(self):
        return [self.text]


class Counted(CompletionFn):
    """As docs/players.md shows: usage= on record_sampling. An object with a nested details object
    on even seats, a plain dict without details on odd ones: the keys differ from call to call."""

    def __init__(self, **kwargs):
        pass

    def __call__(self, prompt, **kwargs):
        facts = read_prompt(prompt)
        reply = json.dumps({"understanding": "u", "choice": facts.upper / 3, "reason": "r"})
        if facts.seat % 2 == 0:
            usage = SimpleNamespace(prompt_tokens=300, completion_tokens=40, total_tokens=340,
                                    completion_tokens_details=SimpleNamespace(reasoning_tokens=12))
        else:
            usage = {"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220}
        record_sampling(prompt=prompt, sampled=[reply], model="my-model-v1", usage=usage)
        return Reply(reply)
'''


def test_a_custom_fn_that_records_usage_gets_its_tokens_and_cost_counted(tmp_path):
    """docs/players.md: what a fn of one's own gets for passing usage= to record_sampling."""
    (tmp_path / "counted_fn.py").write_text(USAGE_FN)
    registry = tmp_path / "registry"
    (registry / "completion_fns").mkdir(parents=True)
    (registry / "completion_fns" / "counted.yaml").write_text("my/counted:\n  class: counted_fn:Counted\n")
    env = base_env()
    env["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{env['PYTHONPATH']}"
    log = tmp_path / "runs" / "counted.jsonl"
    run = subprocess.run([cli("oaieval"), "my/counted", "econarena.beauty_L",
                          "--registry_path", str(registry), "--record_path", str(log), "--max_samples", "2"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    # 2 sessions x 10 runs: seats 2 and 4 report 300 + 40 (12 reasoning), seats 1, 3 and 5 report 200 + 20
    calls_even, calls_odd = 2 * 10 * 2, 2 * 10 * 3
    prompt, completion = 300 * calls_even + 200 * calls_odd, 40 * calls_even + 20 * calls_odd
    report = read_log(log).final_report
    assert (report["usage_prompt_tokens"], report["usage_completion_tokens"]) == (prompt, completion)
    assert report["usage_completion_tokens_details_reasoning_tokens"] == 12 * calls_even
    summary = subprocess.run([cli("econarena-summary"), str(log.parent),
                              "--price-in", "2.5", "--price-out", "10"], env=env, capture_output=True, text=True,
                             timeout=120)
    assert summary.returncode == 0, summary.stderr
    tokens = summary.stdout[summary.stdout.index("tokens used:"):]
    row = next(line for line in tokens.splitlines() if line.startswith("my/counted "))
    cost = (prompt * 2.5 + completion * 10) / 1e6
    assert row.split()[2:9] == ["100", "100", f"{prompt:,}", f"{completion:,}", f"{12 * calls_even:,}",
                                f"{cost:.4f}", "100"], row
