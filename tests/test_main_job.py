"""scripts/main.sh as a user runs it, while another process writes logs into /tmp/evallogs."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from conftest import EVALS_LOGS, REGISTRY, ROOT, base_env, cli, take_evals_log

pytestmark = pytest.mark.e2e  # every test here starts a process or a server


def test_main_job_reports_only_its_own_logs(tmp_path):
    venv = Path(sys.executable).parent.parent  # absolute, as a user may give it
    run_dir, report_dir = tmp_path / "run", tmp_path / "report"
    stop = threading.Event()

    tag = f"econarena-intruder-{uuid.uuid4().hex}"

    def other_user():
        # another oaieval on the machine, writing to evals' default log folder meanwhile: one log
        # every few seconds from main.sh's start to its end (back to back, these oaievals took as much
        # CPU as main.sh itself, and slowed it and the tests beside it)
        while True:
            subprocess.run([cli("oaieval"), "econarena/level1", "econarena.beauty_L", "--registry_path",
                            str(REGISTRY), "--max_samples", "2", "--user", tag], env=base_env(),
                           capture_output=True, timeout=120)
            if stop.wait(8):
                break

    thread = threading.Thread(target=other_user, daemon=True)
    thread.start()
    env = base_env(source=False) | {"VENV": str(venv), "RUN_DIR": str(run_dir), "REPORT_DIR": str(report_dir)}
    env["PATH"] = os.environ["PATH"]
    try:
        proc = subprocess.run(["bash", "scripts/main.sh"], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=900)
    finally:
        stop.set()
        thread.join(150)
    # the other process's logs (and only those: other programs may be writing there too) were ours
    # to make: leave /tmp/evallogs as it was
    found = [p for p in EVALS_LOGS.rglob("*.jsonl") if tag in p.open(errors="replace").readline()]
    for path in found:
        take_evals_log(path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert found, "the other process wrote no log while main.sh ran"
    assert (report_dir / "report.html").is_file() and (report_dir / "report.md").is_file()
    data = json.loads((report_dir / "report.json").read_text())
    files = {Path(n["file"]) for n in data["inputs"]}
    assert len(files) == 10 and all(run_dir in f.parents for f in files)
    assert {c["player"] for c in data["conditions"]} == {"econarena/nash", "econarena/random"}
    assert "econarena/level1" not in proc.stdout
    # the README's example is what main.sh prints: the summary table and its legend, byte for byte
    assert summary_table(proc.stdout) == readme_example(), "README.md's example differs from main.sh's summary"


def summary_table(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("player "))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("mean [95 % bootstrap"))
    return lines[start:end + 1]


def readme_example() -> list[str]:
    """The fenced block of README.md that starts with the summary's header line."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("player ") and "eas" in line)
    end = lines.index("```", start)
    # the README shows the legend's first line and says in brackets what its other lines hold
    return [line for line in lines[start:end] if not (line.startswith("[") and " more lines: " in line)]
