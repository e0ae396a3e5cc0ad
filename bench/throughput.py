"""Seat calls per second against a zero-latency local OpenAI-compatible server.

    python bench/throughput.py [--sessions 20] [--threads 10]

Runs the real ``oaieval`` on econarena.beauty_L (50 calls a session) twice: with ``econarena/chat``
(one shared client per process) and with evals' own ``gpt-4`` completion fn (a new client per
call). Calls/s is counted at the server, from the first request to the last response, so process
start-up is left out; the whole oaieval wall time is printed too.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from openai_server import OpenAIServer  # noqa: E402
from policies import scripted  # noqa: E402


def run(fn: str, server: OpenAIServer, sessions: int, threads: int, extra_env: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EVALS_", "ECONARENA_"))}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-local", EVALS_THREADS=str(threads),
               EVALS_SHOW_EVAL_PROGRESS="", PYTHONPATH=str(ROOT), **(extra_env or {}))
    n0 = len(server.requests)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        subprocess.run([str(Path(sys.executable).parent / "oaieval"), fn, "econarena.beauty_L", "--registry_path",
                        str(ROOT / "registry"), "--record_path", f"{tmp}/log.jsonl", "--max_samples", str(sessions)],
                       env=env, check=True, capture_output=True)
        wall = time.perf_counter() - start
    reqs = server.requests[n0:]
    span = max(r["done"] for r in reqs) - min(r["t"] for r in reqs)
    return {"calls": len(reqs), "span": span, "calls_per_s": len(reqs) / span, "wall": wall}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--threads", type=int, default=10)
    opts = parser.parse_args()
    server = OpenAIServer(scripted, models=("gpt-4",)).start()
    print(f"beauty_L, {opts.sessions} sessions ({opts.sessions * 50} calls), EVALS_THREADS={opts.threads}, "
          f"zero-latency server on 127.0.0.1, {os.cpu_count()} cores")
    print(f"{'completion fn':<28} {'calls/s':>8} {'call phase s':>13} {'oaieval wall s':>15}")
    for label, fn in (("econarena/chat:gpt-4", "econarena/chat:gpt-4"), ("gpt-4 (evals' own fn)", "gpt-4")):
        r = run(fn, server, opts.sessions, opts.threads)
        assert r["calls"] == opts.sessions * 50, r
        print(f"{label:<28} {r['calls_per_s']:>8.0f} {r['span']:>13.2f} {r['wall']:>15.2f}")
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
