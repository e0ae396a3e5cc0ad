"""What a report says is what the code computed from the runs: tried as an attacker with a shared
folder, and as a careless user, through the real ``oaieval`` and ``econarena-*`` commands against the
local OpenAI-compatible server.

One test per way in: a resume that would write over the log it resumes from, figures forged in a
log, two conditions sent into one ``--out``, a FIFO among the logs, a number a real model wrote past
what the reader took, a reply whose usage is not a count, a reply too large to hold, signals in a
burst, a redirect to another host.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from econarena_evals.log.evallog import read_log
from econarena_evals.log.filing import filing_problems
from econarena_evals.score.metrics import METRICS

from conftest import REGISTRY, base_env, cli, run_cli
from openai_server import OpenAIServer
from policies import scripted

CELL = "econarena.beauty_L"
SAMPLES = "2"
CALLS = 2 * 10 * 5  # seat calls of two beauty_L sessions


@pytest.fixture(scope="module")
def srv():
    server = OpenAIServer(scripted, models=("gpt-4",)).start()
    yield server
    server.stop()


@pytest.fixture
def env(srv):
    return base_env() | {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "sk-local"}


def oaieval(log: Path, *extra: str, fn: str = "econarena/chat:gpt-4", cell: str = CELL) -> list[str]:
    return [cli("oaieval"), fn, cell, "--registry_path", str(REGISTRY), "--record_path", str(log),
            "--max_samples", SAMPLES, *extra]


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ---- a resume never writes over its source ----

@pytest.mark.parametrize("how", ["same path", "symlink", "hard link", "in the folder"])
def test_a_resume_that_would_write_over_its_source_is_refused_and_the_log_kept(srv, env, tmp_path, how):
    log = tmp_path / "run.jsonl"
    run_cli(oaieval(log), env)
    kept = log.read_bytes()
    source, extra_env = str(log), {}
    if how == "same path":
        target = log
    elif how == "symlink":
        target = tmp_path / "link.jsonl"
        target.symlink_to(log)
    elif how == "hard link":
        target = tmp_path / "hard.jsonl"
        os.link(log, target)
    else:  # ECONARENA_RESUME names the folder, --record_path one of its logs
        target, source, extra_env = log, "", {"ECONARENA_RESUME": str(tmp_path)}
    before = len(srv.requests)
    args = oaieval(target) + (["--extra_eval_params", f"resume_from={source}"] if source else [])
    proc = subprocess.run(args, env=env | extra_env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    said = [line for line in proc.stderr.splitlines() if line.startswith("econarena:")]
    assert len(said) == 1 and "would write over" in said[0] and "Traceback" not in proc.stderr
    assert log.read_bytes() == kept and target.read_bytes() == kept  # untouched, through every name
    assert len(srv.requests) == before  # refused before any call
    # a new --record_path resumes it: nothing is paid again
    run_cli(oaieval(tmp_path / "new.jsonl", "--extra_eval_params", f"resume_from={log}"), env)
    assert len(srv.requests) == before
