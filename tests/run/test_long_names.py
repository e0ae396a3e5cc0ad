"""A name too long for a file (NAME_MAX, 255 bytes) is shortened with a stable hash."""
from __future__ import annotations

import re
import subprocess

import pytest

from econarena_evals.run.run_set import NAME_MAX, fitted, logs_of

from conftest import TEST_REGISTRY, base_env, cli, run_cli
from openai_server import OpenAIServer
from policies import scripted

TWO = ["econarena-two", "--registry_path", str(TEST_REGISTRY)]
LONG_MODEL = "org/" + "a-very-long-fine-tune-name-" * 11 + "v1"  # 303 characters


def test_a_name_too_long_for_a_file_keeps_a_readable_prefix_and_a_stable_hash(tmp_path):
    assert fitted("econarena.beauty_L", ".resumed-99.jsonl") == "econarena.beauty_L"
    for name in ("e" * 300, "é" * 200, "econarena." + "x" * 240):
        short = fitted(name, ".resumed-99.jsonl")
        assert len((short + ".resumed-99.jsonl").encode("utf-8")) <= NAME_MAX
        assert short == fitted(name, ".resumed-99.jsonl") and short.startswith(name[:50])
        assert short != fitted(name + "z", ".resumed-99.jsonl")  # the same prefix, another name: another hash
        assert re.search(r"-[0-9a-f]{10}$", short)
    logs = logs_of(tmp_path, "econarena." + "x" * 300)
    assert all(len(p.name.encode("utf-8")) <= NAME_MAX for p in logs)
    assert len({p.name.split(".resumed")[0].removesuffix(".jsonl") for p in logs}) == 1  # one stem for all


def _rows(stdout: str) -> list[list[str]]:
    return [re.split(r"\s{2,}", line.strip()) for line in stdout.split("\n\n")[0].splitlines()[2:]]


@pytest.mark.e2e
def test_econarena_run_with_a_300_character_model_name_runs_and_is_summarised(tmp_path):
    server = OpenAIServer(scripted, models=("gpt-4", LONG_MODEL)).start()
    try:
        env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-local"}
        out = tmp_path / "out"
        out.mkdir()  # an existing --out: where the name too long for a folder was looked up, and crashed

        def run(model: str) -> subprocess.CompletedProcess:
            return run_cli([cli("econarena-run"), f"econarena/chat:{model}", *TWO, "--out", str(out),
                            "--max_samples", "1"], env, timeout=600)

        run("gpt-4")
        alone = run_cli([cli("econarena-summary"), str(out)], base_env(), timeout=60)
        first = run(LONG_MODEL)
        assert "Traceback" not in first.stderr and first.stderr.count(" --record_path ") == 2
        folders = sorted(p for p in out.iterdir() if p.is_dir())
        assert len(folders) == 2 and all(len(p.name.encode()) <= NAME_MAX for p in folders)
        again = run(LONG_MODEL)  # the same folder again: each finished log is kept
        assert again.stderr.count(": kept ") == 2 and len([p for p in out.iterdir() if p.is_dir()]) == 2
        both = run_cli([cli("econarena-summary"), str(out)], base_env(), timeout=60)
        rows = _rows(both.stdout)
        assert [r for r in rows if LONG_MODEL not in r[0]] == _rows(alone.stdout)
        assert len([r for r in rows if LONG_MODEL in r[0]]) == 2  # its two cells
    finally:
        server.stop()
