"""A local server that decodes a few requests at a time: wall time against what its slots allow.

    python bench/local_server.py [--slots 1 4] [--decode 1.0] [--sessions 3] [--cells beauty_L beauty_hist]
                                 [--fn gpt-4] [--params call_timeout_s=20]

Starts a real OpenAI-compatible server on 127.0.0.1 that decodes ``--slots`` requests at a time,
``--decode`` seconds each (the others wait in its queue, as in llama.cpp's server or Ollama), runs
the real ``oaieval`` on each cell, and prints: slots, decode time, sessions, errored sessions, the
exit status, the wall time of the call phase (first request to last response, at the server) and of
the whole process, the least wall time the slots allow, their ratio, the requests the server got
and the seat calls the run needed, the most requests its queue held at once (decoding or waiting),
and oaieval's peak memory (max RSS). Prints figures; asserts nothing.

The least wall time: every seat call decoded back to back on every slot (seat calls x decode /
slots); with history no run starts before the one before it ended, so it is at least runs x
ceil(seats x sessions at once / slots) x decode, sessions at once being EVALS_THREADS.
"""
from __future__ import annotations

import argparse
import json
import math
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

OAIEVAL = str(Path(sys.executable).parent / "oaieval")


def least_wall(calls: int, sessions: int, threads: int, runs: int, seats: int, history: bool, slots: int,
               decode: float) -> float:
    every_call = math.ceil(calls / slots) * decode
    if not history:
        return every_call
    waves = math.ceil(sessions / threads)
    per_run = math.ceil(seats * min(sessions, threads) / slots) * decode
    return max(every_call, waves * runs * per_run)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--decode", type=float, default=1.0, help="seconds the server takes per request")
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--threads", type=int, default=10, help="EVALS_THREADS")
    parser.add_argument("--cells", nargs="+", default=["beauty_L", "beauty_hist"])
    parser.add_argument("--fn", default="gpt-4")
    parser.add_argument("--params", default="", help="--extra_eval_params, e.g. call_timeout_s=20")
    opts = parser.parse_args()
    print(f"{opts.fn}, EVALS_THREADS={opts.threads}, {os.cpu_count()} cores"
          + (f", --extra_eval_params {opts.params}" if opts.params else ", every default"))
    print(f"{'slots':>5} {'decode s':>8} {'cell':<12} {'sessions':>8} {'errored':>7} {'exit':>4} "
          f"{'wall s':>7} {'process s':>9} {'least s':>7} {'x least':>7} {'requests':>8} {'seat calls':>10} "
          f"{'queued':>6} {'RSS MB':>6}")
    for slots in opts.slots:
        for cell in opts.cells:
            server = OpenAIServer(scripted, models=("gpt-4",), slots=slots, decode_s=opts.decode).start()
            env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EVALS_", "ECONARENA_"))}
            env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-local", EVALS_THREADS=str(opts.threads),
                       EVALS_SHOW_EVAL_PROGRESS="", PYTHONPATH=str(ROOT))
            with tempfile.TemporaryDirectory() as tmp:
                args = [OAIEVAL, opts.fn, f"econarena.{cell}", "--registry_path", str(ROOT / "registry"),
                        "--record_path", f"{tmp}/log.jsonl", "--max_samples", str(opts.sessions)]
                if opts.params:
                    args += ["--extra_eval_params", opts.params]
                start = time.perf_counter()
                with open(f"{tmp}/stderr", "w+") as err:
                    child = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=err, text=True)
                    _, status, usage = os.wait4(child.pid, 0)
                    err.seek(0)
                    stderr = err.read()
                process_s = time.perf_counter() - start
                returncode = os.waitstatus_to_exitcode(status)
                rows = [json.loads(line) for line in Path(f"{tmp}/log.jsonl").read_text().splitlines() if line]
            server.stop()
            spec = next(r["spec"] for r in rows if "spec" in r)
            runs, seats = int(spec["run_config"]["eval_spec"]["args"]["runs"]), int(
                spec["run_config"]["eval_spec"]["args"].get("seats", 5))
            history = int(spec["run_config"]["eval_spec"]["args"].get("history_runs", 0)) > 0
            report = next((r["final_report"] for r in rows if "final_report" in r), {})
            reqs = [r for r in server.requests if "done" in r]
            wall = max(r["done"] for r in reqs) - min(r["t"] for r in reqs) if reqs else float("nan")
            calls = opts.sessions * runs * seats
            least = least_wall(calls, opts.sessions, opts.threads, runs, seats, history, slots, opts.decode)
            print(f"{slots:>5} {opts.decode:>8.2f} {cell:<12} {opts.sessions:>8} "
                  f"{report.get('errored_sessions', '?'):>7} {returncode:>4} {wall:>7.1f} {process_s:>9.1f} "
                  f"{least:>7.1f} {wall / least:>6.2f}x {len(server.requests):>8} {calls:>10} "
                  f"{server.most_held:>6} {usage.ru_maxrss / 1024:>6.0f}")
            for line in stderr.splitlines():
                if line.startswith("econarena: plan: ") and "at once" in line:
                    print(f"      {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
