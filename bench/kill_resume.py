"""One SIGKILL mid-way through beauty_hist.test, then a resume: what was kept and what was paid twice.

    python bench/kill_resume.py [--kill-at 50] [--threads 10] [--latency 0.05]

Real ``oaieval`` with ``econarena/chat`` against the local test server (100 sessions, 50 calls
each). The first run is killed (SIGKILL) once ``--kill-at`` sessions are in its log; the second
resumes from that log. Every request is mapped back to its session by the eval's per-call seed.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from openai_server import OpenAIServer  # noqa: E402
from policies import scripted  # noqa: E402
from test_resume import CALLS, SESSIONS, durable_sessions, session_of_seed  # noqa: E402

from econarena_evals.logs import read_log  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kill-at", type=int, default=50)
    parser.add_argument("--threads", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.05, help="server seconds per call")
    opts = parser.parse_args()
    server = OpenAIServer(scripted, latency_s=opts.latency).start()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EVALS_", "ECONARENA_"))}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-local", EVALS_SHOW_EVAL_PROGRESS="",
               EVALS_THREADS=str(opts.threads), PYTHONPATH=str(ROOT))
    oaieval = str(Path(sys.executable).parent / "oaieval")
    base = [oaieval, "econarena/chat:gpt-4", "econarena.beauty_hist.test.v0", "--registry_path", str(ROOT / "registry")]
    seeds = session_of_seed()
    with tempfile.TemporaryDirectory() as tmp:
        first, second = Path(tmp) / "first.jsonl", Path(tmp) / "second.jsonl"
        proc = subprocess.Popen(base + ["--record_path", str(first)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while durable_sessions(first) < opts.kill_at and proc.poll() is None:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        time.sleep(0.5)
        n1 = len(server.requests)
        kept = {s["session"] for s in read_log(first).sessions if not s["errored"]}
        started = {seeds[r["body"]["seed"]] for r in server.requests[:n1] if r["body"]}
        subprocess.run(base + ["--record_path", str(second), "--extra_eval_params", f"resume_from={first}"],
                       env=env, check=True, capture_output=True)
        n2 = len(server.requests)
        report = read_log(second).final_report
    server.stop()
    print(f"killed with {len(kept)} sessions on disk; {len(started - kept)} in flight (lost)")
    print(f"first run {n1} calls, resume {n2 - n1} calls, total {n2} (an uninterrupted run: {SESSIONS * CALLS})")
    print(f"calls paid twice: {n2 - SESSIONS * CALLS} ({n1 - len(kept) * CALLS} of the first run's calls were "
          "for sessions the kill cut off)")
    print(f"final report: {report['sessions']} sessions, {report['errored_sessions']} errored")


if __name__ == "__main__":
    main()
