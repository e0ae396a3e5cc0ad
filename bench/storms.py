"""Storms: an overloaded, flaky or half-broken endpoint through the real ``oaieval``, at full size.

    python bench/storms.py [--only NAME ...] [--storm-s 90] [--patience-s 30]

Each case runs the real ``oaieval econarena/chat:claude-sonnet-4-5`` at the default ``EVALS_THREADS``
and call policy against tests/openai_server.py made to misbehave as the case says, and prints one
row: exit status, sessions errored of sessions, requests (or batch lines answered) against seat
calls, wall time and, for batch cases, the peak memory of the ``oaieval`` process.

Cases (docs/reliability.md's retry table):
  storm       beauty_hist dev (20 sessions): Anthropic's 529 to every request for --storm-s from 5 s in
  from-start  beauty_L, 5 sessions: OpenAI's 503 from the first request for 60 s
  windows     beauty_L, 4 sessions, replies in 1 s: Anthropic's 529 12 s of every 20 s from the first
              request, beside the floor (the same run with no overload, measured first)
  endless     beauty_L, 5 sessions: Google's 503 UNAVAILABLE for ever, rate_limit_patience_s=--patience-s
  flaky-L     beauty_L dev: 25 % of requests answered 500
  flaky-hist  beauty_hist dev: 25 % of requests answered 500
  dead        beauty_L dev: a port where nothing listens (call_timeout_s=30)
  always-500  beauty_L dev: every request answered 500 (call_timeout_s=30)
  batch-down  batch mode, beauty_L, 4 sessions: the batch status endpoint answers 503 for 10 s
  batch-bad   batch mode: every batch object's errors.data holds strings
  batch-404   batch mode: the first output file answers 404
  batch-never batch mode: every output file answers 404 (exit 4: each line bought twice, no more)
  batch-big   batch mode: an output file of about 400 MB (replies of 2 MB)
"""
from __future__ import annotations

import argparse
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from econarena_evals.log.evallog import read_log  # noqa: E402

from openai_server import BatchBehaviour, Faults, OpenAIServer, Storm, api_error  # noqa: E402
from policies import scripted  # noqa: E402

BIN = Path(sys.executable).parent
MODEL = "claude-sonnet-4-5"


def oaieval(base_url: str, cell: str, log: Path, sessions: Optional[int], *extra: str) -> tuple[int, float, str]:
    env = dict(os.environ, OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-bench", PYTHONPATH=str(ROOT))
    args = [str(BIN / "oaieval"), f"econarena/chat:{MODEL}", f"econarena.{cell}", "--registry_path",
            str(ROOT / "registry"), "--record_path", str(log), *extra]
    if sessions:
        args += ["--max_samples", str(sessions)]
    started = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=7200)
    return proc.returncode, time.perf_counter() - started, proc.stderr


def errored(log: Path) -> tuple[int, int]:
    """(errored, all) sessions, counted from each session's event in the log."""
    sessions = [e for e in read_log(log).sessions] if log.exists() else []
    return sum(1 for s in sessions if s.get("errored")), len(sessions)


def row(name: str, status: int, wall: float, log: Path, sent: str, extra: str = "") -> None:
    bad, total = errored(log)
    print(f"{name:<11} exit {status:<3} errored {bad:>2} of {total:<3} {sent:<36} {wall:7.1f} s  {extra}", flush=True)


def synchronous(name: str, server: OpenAIServer, cell: str, sessions: Optional[int], calls: int, tmp: Path,
                *extra: str, say: Callable[[], str] = lambda: "") -> float:
    """One run against ``server``, its row printed; its wall time."""
    server.start()
    try:
        status, wall, stderr = oaieval(server.base_url, cell, tmp / f"{name}.jsonl", sessions, *extra)
    finally:
        server.stop()
    answered = sum(r.get("answered", False) for r in server.requests)
    sent = f"requests {len(server.requests):,} for {calls:,} calls ({len(server.requests) / calls:.2f}x), answered {answered:,}"
    row(name, status, wall, tmp / f"{name}.jsonl", sent, say())
    if status not in (0, 3):
        print("    " + (stderr.strip().splitlines() or [""])[-1], flush=True)
    return wall


def batched(name: str, setup: Callable[[OpenAIServer], None], tmp: Path, sessions: int = 4) -> None:
    server = OpenAIServer(scripted, models=(MODEL,), batch=BatchBehaviour(validate_s=0.5, run_s=1.0))
    setup(server)
    server.start()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    try:
        status, wall, stderr = oaieval(server.base_url, "beauty_L", tmp / f"{name}.jsonl", sessions,
                                       "--completion_args", "batch=yes,batch_poll_s=1")
    finally:
        server.stop()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    calls = sessions * 50
    lines = server.batch.lines_answered
    sent = f"lines {lines:,} for {calls:,} calls ({lines - calls:,} paid twice), batches {len(server.batch.created)}"
    memory = f"peak {peak / 1024:,.0f} MiB" if peak > before else "peak (below an earlier case's)"
    row(name, status, wall, tmp / f"{name}.jsonl", sent, memory)
    said = [x for x in stderr.splitlines() if "cannot be read" in x and "batch" in x or "more than once" in x]
    for line in said[:1] + [x for x in stderr.splitlines() if x.startswith("econarena: stopped:")]:
        print("    " + line, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", help="the cases to run (default: all)")
    parser.add_argument("--storm-s", type=float, default=90.0)
    parser.add_argument("--patience-s", type=float, default=30.0)
    opts = parser.parse_args()
    want = set(opts.only or [])
    print(f"EVALS_THREADS={os.environ.get('EVALS_THREADS', '10 (default)')}, load "
          f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)

        def case(name: str) -> bool:
            return not want or name in want

        if case("storm"):
            storm = Storm(after_s=5.0, for_s=opts.storm_s, shape="anthropic")
            synchronous("storm", OpenAIServer(scripted, models=(MODEL,), answer=storm, latency_s=0.05),
                        "beauty_hist", None, 1000, tmp, say=lambda: f"refused {storm.refused:,}")
        if case("from-start"):
            storm = Storm(after_s=0.0, for_s=60.0, shape="openai")
            synchronous("from-start", OpenAIServer(scripted, models=(MODEL,), answer=storm), "beauty_L", 5, 250,
                        tmp, say=lambda: f"refused {storm.refused:,}")
        if case("windows"):
            floor = synchronous("floor", OpenAIServer(scripted, models=(MODEL,), latency_s=1.0), "beauty_L", 4, 200,
                                tmp)
            storm = Storm(after_s=0.0, for_s=12.0, shape="anthropic", every_s=20.0)
            synchronous("windows", OpenAIServer(scripted, models=(MODEL,), answer=storm, latency_s=1.0), "beauty_L",
                        4, 200, tmp, say=lambda: f"refused {storm.refused:,}; the floor {floor:.1f} s, and "
                        f"{floor + 12:.1f} s with the first 12 s overloaded")
        if case("endless"):
            storm = Storm(after_s=0.0, for_s=float("inf"), shape="google")
            synchronous("endless", OpenAIServer(scripted, models=(MODEL,), answer=storm), "beauty_L", 5, 250, tmp,
                        "--extra_eval_params", f"rate_limit_patience_s={opts.patience_s:g}",
                        say=lambda: f"patience {opts.patience_s:g} s")
        for cell in ("L", "hist"):
            if case(f"flaky-{cell}"):
                server = OpenAIServer(scripted, models=(MODEL,), faults=Faults(http_500=0.25, seed=3))
                synchronous(f"flaky-{cell}", server, f"beauty_{cell}", None, 1000, tmp,
                            say=lambda s=server: f"500s {s.injected['500']:,}")
        if case("dead"):
            port = free_port()
            status, wall, _ = oaieval(f"http://127.0.0.1:{port}/v1", "beauty_L", tmp / "dead.jsonl", None,
                                      "--extra_eval_params", "call_timeout_s=30")
            row("dead", status, wall, tmp / "dead.jsonl", "nothing listens", "bound: call_timeout_s + 10 s = 40 s")
        if case("always-500"):
            server = OpenAIServer(scripted, models=(MODEL,), faults=Faults(http_500=1.0))
            synchronous("always-500", server, "beauty_L", None, 1000, tmp, "--extra_eval_params", "call_timeout_s=30",
                        say=lambda: "bound: call_timeout_s + 10 s = 40 s")
        if case("batch-down"):
            down: dict[str, float] = {}

            def fault(method: str, path: str) -> Any:
                if method == "GET" and "/batches/" in path:
                    down.setdefault("from", time.monotonic())
                    if time.monotonic() - down["from"] < 10.0:
                        return 503, api_error("temporarily unavailable", kind="server_error")
                return None

            batched("batch-down", lambda s: setattr(s.batch, "fault", fault), tmp)
        if case("batch-bad"):
            batched("batch-bad", lambda s: setattr(s.batch, "mangle", lambda v: {
                **v, "errors": {"object": "list", "data": ["not an error object"]}}), tmp)
        if case("batch-404"):
            gone: list[str] = []

            def lose_first(method: str, path: str) -> Any:
                if method == "GET" and path.endswith("/content") and (not gone or gone[0] == path):
                    gone[:1] = [path]
                    return 404, api_error("No such File object", param="id")
                return None

            batched("batch-404", lambda s: setattr(s.batch, "fault", lose_first), tmp)
        if case("batch-never"):
            batched("batch-never", lambda s: setattr(s.batch, "fault", lambda method, path: (
                404, api_error("No such File object", param="id")) if path.endswith("/content") else None), tmp)
        if case("batch-big"):
            pad = " " * (2 * 1024 * 1024)

            def big(which: str, lines: list) -> list:
                for line in lines:  # a 2 MB reply that still ends in the answer
                    message = line["response"]["body"]["choices"][0]["message"]
                    message["content"] = pad + message["content"]
                return lines

            batched("batch-big", lambda s: setattr(s.batch, "written", big), tmp)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
