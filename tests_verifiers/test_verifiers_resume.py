"""``vf-eval --resume`` after a kill, through the real CLI against the stand-in endpoint on 127.0.0.1:
killed with SIGKILL, resumed, killed with SIGTERM, resumed to the end, the run holds every session
exactly once with oaieval's figures, and what each attempt paid is counted at the server: an answered
seat call is paid once (``on_verifiers.journal``), bar one a kill caught before it was recorded."""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable

from conftest import KEY_VAR, episodes, evals_bin, oaieval, oaieval_sessions, run, traces_file, vf_eval_command
from front_ends import ROOT, assert_same_figures
from openai_server import OpenAIServer
from policies import scripted

CELL = "beauty_hist"  # one run at a time: a session killed midway has answered some of its calls
CALLS = 10 * 5  # a session's seat calls: 10 runs, 5 seats
CONCURRENT, WAVE = 2, 5  # sessions played at once (-c); a history cell's calls at once in one: a run's seats
HANG_S = 1200  # a guard against a run that never gets there, not a speed target


def finished_episodes(out: Path) -> int:
    """Whole lines of the run's traces.jsonl (one an episode); a line a kill tore is not one."""
    found = list(out.glob("*/traces.jsonl"))
    return found[0].read_bytes().count(b"\n") if found else 0


def killed_midway(cmd: list[str], ready: Callable[[], bool], sig: signal.Signals, log: Path) -> tuple[int, float]:
    """``cmd`` (a vf-eval run) started, sent ``sig`` once ``ready()``; its exit status and when it was sent
    (``time.perf_counter``, the stand-in server's clock)."""
    with open(log, "wb") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, cwd=str(ROOT), start_new_session=True,
                                env={**os.environ, KEY_VAR: "none", "PYTHONUNBUFFERED": "1"})
        try:
            deadline = time.monotonic() + HANG_S
            while not ready():
                assert proc.poll() is None, f"vf-eval ended ({proc.returncode}) first:\n{log.read_text()[-3000:]}"
                assert time.monotonic() < deadline, f"not there in {HANG_S} s"
                time.sleep(0.05)
            at = time.perf_counter()
            os.killpg(proc.pid, sig)  # its group: vf-eval and anything it started
            return proc.wait(timeout=HANG_S), at
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def test_resume_after_a_kill_finishes_the_missing_sessions_each_once(tmp_path):
    server = OpenAIServer(scripted, models=("gpt-4o",), latency_s=0.05).start()
    try:
        oaieval("econarena/chat:gpt-4o", CELL, tmp_path / "evals.jsonl",
                {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url})
        since = len(server.requests)
        out = tmp_path / "verifiers"
        # two sessions at a time, each killed halfway through its calls: some finished, two midway, some not begun
        first = vf_eval_command(server.base_url, "gpt-4o", out, "--env.taskset.cells", f'["{CELL}"]',
                                "-c", str(CONCURRENT))
        status, at = killed_midway(first, lambda: server.answered(since) >= 5 * CALLS, signal.SIGKILL,
                                   tmp_path / "first.log")
        assert status == -signal.SIGKILL
        caught = server.in_flight(at, since)  # the calls a kill caught on the wire: paid, or not, and lost
        kept = [finished_episodes(out)]
        paid = [server.answered(since)]
        assert kept[0] < 20
        # the summary reads the killed run as partial and tells vf-eval's resume, which is run as told
        done = run([str(evals_bin() / "econarena-summary"), str(out)])
        assert f"partial: {kept[0]} of 20 session(s) finished" in done.stdout, done.stdout + done.stderr
        [told] = [line.strip() for line in done.stdout.splitlines() if line.strip().startswith("vf-eval @ ")]
        resume = [first[0], *shlex.split(told)[1:]]
        assert resume[1:] == ["@", str(next(out.glob("*/configs/resolved/eval.json"))), "--resume"]

        # the resume, killed in turn with SIGTERM: vf-eval ends its episodes and exits as on Ctrl-C
        start = len(server.requests)
        status, at = killed_midway(resume, lambda: server.answered(since) >= paid[0] + 5 * CALLS, signal.SIGTERM,
                                   tmp_path / "second.log")
        assert status == 130
        caught += server.in_flight(at, start)
        kept.append(finished_episodes(out))
        paid.append(server.answered(since) - sum(paid))
        assert kept[1] < 20

        done = run(resume)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
        paid.append(server.answered(since) - sum(paid))
    finally:
        server.stop()
    # every session once, each as oaieval scores it
    rows = episodes(out)
    assert all(e["ok"] for e in rows)
    sessions = [next(t["info"]["econarena"] for t in e["traces"] if "econarena_session" in t["info"]["econarena"])
                for e in rows]
    assert sorted(s["session"] for s in sessions) == list(range(20))
    assert_same_figures(oaieval_sessions(tmp_path / "evals.jsonl"),
                        {s["session"]: s["econarena_session"] for s in sessions}, CELL)
    done = run([str(evals_bin() / "econarena-summary"), "--strict", str(traces_file(out).parent)])
    assert done.returncode == 0 and "finished" in done.stdout, done.stdout + done.stderr
    # what the resumes paid: the calls the killed sessions had answered were taken from the run's record of
    # them (``econarena_calls.jsonl``), marked on the traces, so only a call a kill caught before it was
    # recorded (sent, or answered and not yet back) was paid twice: at most a wave of each session in play
    # at each kill (without the record: every call those sessions had answered); the last resume, run to
    # its end, sent the rest of the sessions it owed and nothing more
    reused = sum(1 for e in rows for t in e["traces"] for c in t["info"]["econarena"]["calls"] if c.get("reused"))
    assert reused > 0 and sum(paid) - 20 * CALLS <= 2 * CONCURRENT * WAVE, (paid, reused, caught)
    owed = 20 - kept[1]
    assert paid[2] <= owed * CALLS, (paid, kept)
    print(f"kills after {kept} episodes; calls answered per attempt {paid}: {sum(paid)} for {20 * CALLS} "
          f"calls, {sum(paid) - 20 * CALLS} paid again ({caught} at the server at the kills), {reused} taken "
          "from the run's record")
