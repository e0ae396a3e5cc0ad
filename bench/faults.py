"""How long a whole cell takes to end when the endpoint is down, and how many requests it sends.

    python bench/faults.py [--call-timeout 10] [--splits dev,test]

For each endpoint fault (a port where nothing listens, a server that answers every request with
HTTP 500, a server that accepts and never answers) and each completion fn (evals' own ``gpt-4`` and
``econarena/chat:gpt-4``), runs the real ``oaieval`` on ``beauty_L`` (dev: 20 sessions, test: 100)
at the default ``EVALS_THREADS`` and retry policy, and prints the wall time, the requests the
server saw, the bound ``calls x max_attempts``, the errored sessions, and the machine's load
(one-minute average) before and after the run. Target: every run ends
within call_timeout_s + 10 s with every session errored (exit status 3).
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from openai_server import Faults, OpenAIServer  # noqa: E402
from policies import scripted  # noqa: E402

EVALS = {"dev": ("econarena.beauty_L", 20), "test": ("econarena.beauty_L.test.v0", 100)}


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(fn: str, eval_name: str, base_url: str, call_timeout: float) -> tuple[float, dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EVALS_", "ECONARENA_"))}
    env.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-local", EVALS_SHOW_EVAL_PROGRESS="", PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        proc = subprocess.run([str(Path(sys.executable).parent / "oaieval"), fn, eval_name, "--registry_path",
                               str(ROOT / "registry"), "--record_path", f"{tmp}/log.jsonl", "--extra_eval_params",
                               f"call_timeout_s={call_timeout:g}"], env=env, capture_output=True, timeout=600)
        assert proc.returncode == 3, proc.stderr[-2000:]  # every session errored: exit status 3
        wall = time.perf_counter() - start
        report = next(json.loads(line)["final_report"] for line in open(f"{tmp}/log.jsonl")
                      if '"final_report"' in line)
    return wall, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--call-timeout", type=float, default=10.0)
    parser.add_argument("--splits", default="dev,test")
    opts = parser.parse_args()
    servers = {
        "always 500": OpenAIServer(scripted, models=("gpt-4",), faults=Faults(http_500=1.0)).start(),
        "never answers": OpenAIServer(scripted, models=("gpt-4",), latency_s=3600).start(),
    }
    print(f"call_timeout_s={opts.call_timeout:g}, max_attempts=4 (default), EVALS_THREADS default (10)")
    print(f"{'endpoint':<14} {'fn':<22} {'split':<5} {'wall s':>7} {'requests':>9} {'bound':>6} {'errored':>8}"
          f"  load before-after")
    for split in opts.splits.split(","):
        eval_name, sessions = EVALS[split]
        for fault in ("closed port", "always 500", "never answers"):
            for fn in ("gpt-4", "econarena/chat:gpt-4"):
                server = servers.get(fault)
                url = server.base_url if server else f"http://127.0.0.1:{closed_port()}/v1"
                n0 = len(server.seen) if server else 0
                before = os.getloadavg()[0]
                wall, report = run(fn, eval_name, url, opts.call_timeout)
                after = os.getloadavg()[0]
                sent = len(server.seen) - n0 if server else "-"
                print(f"{fault:<14} {fn:<22} {split:<5} {wall:>7.1f} {sent!s:>9} {sessions * 50 * 4:>6} "
                      f"{report['errored_sessions']:>4}/{sessions}  {before:.1f}-{after:.1f}", flush=True)
    for server in servers.values():
        server.stop()


if __name__ == "__main__":
    main()
