"""Every stop is a clean, resumable one, and a resume pays for no answered call twice.

The real ``oaieval`` against a real local server that counts the answers it sends (the calls an API
would bill) and answers deterministically (a function of the prompt): a run is stopped by a used-up
quota, Ctrl-C (SIGINT), SIGTERM, SIGHUP or ``kill -9``, in a cell without history (``beauty_L``,
where every run of a session is in flight at once) and in a history cell (``beauty_hist``, where
run k's prompt shows run k-1's outcome), and then the command it printed is run. Over both runs
the server answers at most the calls needed plus those the stop caught in flight, and the resumed
log's final report is an uninterrupted run's, byte for byte.

``stop_and_resume`` is also what ``bench/kill_resume.py`` runs at full size.
"""
from __future__ import annotations

import json
import shlex
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Optional

import pytest

from econarena_evals.log.evallog import read_log
from econarena_evals.log.filing import filing_problems

from conftest import REGISTRY, base_env, cli
from openai_server import OpenAIServer, RateLimiter
from policies import scripted

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

MAX_CONCURRENCY = 16  # calls in flight at once: what a stop can catch, and so what a resume may pay twice
SIGNALS = {"ctrl-c": signal.SIGINT, "sigterm": signal.SIGTERM, "sighup": signal.SIGHUP, "kill-9": signal.SIGKILL}
STATUS = {"quota": 4, "ctrl-c": 130, "sigterm": 143, "sighup": 129, "kill-9": -9}
WORD = {"quota": "stopped: quota", "ctrl-c": "stopped: interrupted", "sigterm": "stopped: terminated",
        "sighup": "stopped: hung up", "kill-9": "partial"}


def environment(server: OpenAIServer, threads: int = 4, concurrency: int = MAX_CONCURRENCY) -> dict[str, str]:
    return base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-local",
                         "EVALS_THREADS": str(threads), "ECONARENA_MAX_CONCURRENCY": str(concurrency),
                         "EVALS_SHOW_EVAL_PROGRESS": ""}


def command(eval_name: str, log: Path, max_samples: Optional[int]) -> list[str]:
    return [cli("oaieval"), "econarena/chat:gpt-4", eval_name, "--registry_path", str(REGISTRY),
            "--record_path", str(log)] + (["--max_samples", str(max_samples)] if max_samples else [])


def uninterrupted(server: OpenAIServer, env: dict[str, str], eval_name: str, log: Path,
                  max_samples: Optional[int]) -> tuple[dict[str, Any], int]:
    """The final report of a run nothing stops, and the calls it needed."""
    before = len(server.requests)
    subprocess.run(command(eval_name, log, max_samples), env=env, check=True, capture_output=True, timeout=900)
    return read_log(log).final_report, server.answered(before)


def stop_and_resume(server: OpenAIServer, env: dict[str, str], eval_name: str, stop: str, at: int, tmp: Path,
                    max_samples: Optional[int] = None) -> dict[str, Any]:
    """Stop a run once the server answered ``at`` calls (``quota``: the quota runs out there), then
    run the resume command it printed (after ``kill -9``, the one ``econarena-summary`` prints)."""
    first = tmp / f"{stop}.jsonl"
    n0 = len(server.requests)
    limiter = server.limiter
    if stop == "quota":
        assert limiter is not None
        limiter.quota, limiter.answered = at, 0
    proc = subprocess.Popen(command(eval_name, first, max_samples), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    stopped_at = None
    if stop != "quota":
        deadline = time.monotonic() + 600
        while server.answered(n0) < at and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        stopped_at = time.perf_counter()
        proc.send_signal(SIGNALS[stop])
    _, err = proc.communicate(timeout=600)
    time.sleep(0.3)  # the server's threads finish with connections the stop cut
    if stop == "quota":
        stopped_at = next((r["t"] for r in server.requests[n0:] if r.get("quota_refused")), time.perf_counter())
        limiter.quota = None  # the quota is restored: the resume runs against a healthy server
    n1 = len(server.requests)
    summary = subprocess.run([cli("econarena-summary"), str(first)], env=env, capture_output=True, text=True)
    if stop == "kill-9":  # nothing printed: the summary's command, with the endpoint the log does not keep
        line = f"OPENAI_BASE_URL={shlex.quote(server.base_url)} " + next(
            x for x in summary.stdout.splitlines() if "resume_from=" in x).strip()
    else:
        line = next(x for x in err.splitlines() if "resume_from=" in x).strip()
    said = [x for x in err.splitlines() if x.startswith("econarena: stopped")]
    resumed = subprocess.run(["bash", "-c", line], env=env, capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    second = Path(shlex.split(line)[shlex.split(line).index("--record_path") + 1])
    plan_line = next((x for x in resumed.stderr.splitlines() if "econarena: plan:" in x), "")
    sent_line = next((x for x in resumed.stderr.splitlines() if "this run sent" in x), "")
    return {
        "eval": eval_name, "stop": stop, "status": proc.returncode, "said": said, "stderr": err,
        "answered_first": server.answered(n0) - server.answered(n1), "answered_resume": server.answered(n1),
        "in_flight_at_stop": server.in_flight(stopped_at, n0, n1),
        "first_log": first, "second_log": second, "summary": summary.stdout, "plan_line": plan_line,
        "sent_line": sent_line,
        "kept_calls": read_log(first).calls, "report": read_log(second).final_report, "resume_line": line,
    }


def report_bytes(report: dict[str, Any]) -> str:
    return json.dumps(report, sort_keys=True)


@pytest.fixture(scope="module")
def srv():
    server = OpenAIServer(scripted, models=("gpt-4",), latency_s=0.01, limiter=RateLimiter()).start()
    yield server
    server.stop()


CASES = [("econarena.beauty_L", 4, "quota", 60), ("econarena.beauty_L", 4, "ctrl-c", 60),
         ("econarena.beauty_L", 4, "sigterm", 60), ("econarena.beauty_L", 4, "kill-9", 60),
         ("econarena.beauty_hist", 4, "quota", 60), ("econarena.beauty_hist", 4, "ctrl-c", 60),
         ("econarena.beauty_hist", 4, "sigterm", 60), ("econarena.beauty_hist", 4, "sighup", 60),
         ("econarena.beauty_hist", 4, "kill-9", 60)]


@pytest.fixture(scope="module")
def references(srv, tmp_path_factory):
    """Each cell's uninterrupted run, once."""
    out = {}
    for eval_name in sorted({c[0] for c in CASES}):
        out[eval_name] = uninterrupted(srv, environment(srv), eval_name,
                                       tmp_path_factory.mktemp("full") / "full.jsonl", 4)
    return out


@pytest.mark.parametrize("eval_name,max_samples,stop,at", CASES, ids=[f"{c[0].split('.')[1]}-{c[2]}" for c in CASES])
def test_a_stopped_run_resumes_without_paying_an_answered_call_twice(srv, references, tmp_path, eval_name,
                                                                      max_samples, stop, at):
    full_report, needed = references[eval_name]
    f = stop_and_resume(srv, environment(srv), eval_name, stop, at, tmp_path, max_samples)
    assert f["status"] == STATUS[stop], f["stderr"][-2000:]
    assert "Traceback" not in f["stderr"]
    assert f["answered_first"] >= at and f["answered_first"] < needed, "the stop came too late to test anything"
    if stop != "kill-9":  # one line naming the cause, with what is kept, then the resume command
        assert len(f["said"]) == 1 and "answered seat call(s) are kept in" in f["said"][0], f["stderr"][-2000:]
    # every answered call is on disk: the resume pays only for what the log lacks ...
    assert f["answered_resume"] == needed - f["kept_calls"]
    paid_twice = f["answered_first"] + f["answered_resume"] - needed
    assert paid_twice == f["answered_first"] - f["kept_calls"]
    # ... and the log lacks at most the calls the stop caught in flight
    assert paid_twice <= max(0, f["in_flight_at_stop"]) if stop != "kill-9" else paid_twice <= MAX_CONCURRENCY
    if stop == "quota":  # a refused request is not answered: nothing is paid twice
        assert paid_twice == 0 and f["answered_first"] == at
    # the resumed report is the uninterrupted run's, byte for byte (token usage included)
    assert report_bytes(f["report"]) == report_bytes(full_report)
    assert not filing_problems(f["second_log"])
    resumed = read_log(f["second_log"])
    assert sum(int(s.get("reused_calls") or 0) for s in resumed.sessions) == f["kept_calls"]
    # the plan line of the resume counts what is left
    assert f"{f['kept_calls']:,} seat calls kept from the log resumed from, " \
           f"{needed - f['kept_calls']:,} to send" in f["plan_line"]
    # ... and its last line what it sent beside what its log holds (evals' token totals count the whole log)
    assert f["sent_line"] == (f"econarena: {eval_name}.dev.v0: this run sent {f['answered_resume']:,} seat call(s); "
                              f"its log holds {needed:,}, {f['kept_calls']:,} of them kept from "
                              f"{f['first_log'].resolve()}")
    # econarena-summary on the stopped log: a row with its status, its counts and the resume command
    row = next(x for x in f["summary"].splitlines() if x.startswith("econarena/chat:gpt-4"))
    assert row.rstrip().endswith(WORD[stop]), f["summary"]
    assert f"{f['kept_calls']} seat call(s) answered" in f["summary"]
    assert f"resume_from={f['first_log'].resolve()}" in f["summary"]


def test_a_fn_that_records_nothing_has_every_answered_call_on_disk_when_killed(tmp_path):
    """A fn of the user's that records no sampling event: its calls are logged all the same, each on
    disk before it counts as answered, so a ``kill -9`` in the middle of a run of seats loses none of
    those answered before it (one seat call at a time: call k+1 starts after call k is logged)."""
    answered, kill_at = tmp_path / "answered", 8  # the 8th call: the third seat of the second run
    (tmp_path / "silent_fn.py").write_text(
        "import os, signal\n"
        "from evals.api import CompletionFn, CompletionResult\n"
        "class R(CompletionResult):\n    def get_completions(self):\n        return ['{\"choice\": 30}']\n"
        "class Fn(CompletionFn):\n    def __init__(self, **kwargs):\n        pass\n"
        "    def __call__(self, prompt, **kwargs):\n"
        f"        with open({str(answered)!r}, 'a+') as f:\n"
        "            f.seek(0)\n"
        f"            if len(f.read().splitlines()) + 1 == {kill_at}:\n"
        "                os.kill(os.getpid(), signal.SIGKILL)\n"
        "            f.write('x\\n')\n"
        "        return R()\n")
    registry = tmp_path / "registry"
    (registry / "completion_fns").mkdir(parents=True)
    (registry / "completion_fns" / "silent.yaml").write_text("silent:\n  class: silent_fn:Fn\n")
    env = {**base_env(), "EVALS_THREADS": "1"}
    env["PYTHONPATH"] = f"{tmp_path}:{env['PYTHONPATH']}"
    log = tmp_path / "log.jsonl"
    proc = subprocess.run([cli("oaieval"), "silent", "econarena.beauty_hist", "--registry_path", str(REGISTRY),
                           "--registry_path", str(registry), "--record_path", str(log), "--max_samples", "1",
                           "--extra_eval_params", "max_concurrency=1"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    assert len(answered.read_text().splitlines()) == kill_at - 1
    sampled = [json.loads(line) for line in log.read_text().splitlines() if '"type": "sampling"' in line]
    assert len(sampled) == kill_at - 1  # every answered call, the second run's first two included
    assert {(s["data"]["econarena"]["run"], s["data"]["econarena"]["seat"]) for s in sampled} == {
        *((0, seat) for seat in range(1, 6)), (1, 1), (1, 2)}
    assert all(s["data"].get("recorded_by") == "econarena" for s in sampled)
