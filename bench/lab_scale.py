"""A lab's tournament: 50 stand-in models on 5 endpoints, 20 tables each on one melee cell, SIGTERM
midway and the printed resume; what each endpoint served, what was paid twice, memory, report time.

    python bench/lab_scale.py [--models 50] [--tables-per-player 20] [--stop-at 5000] [--threads 20]

Real ``oaieval`` with ``econarena/chat`` against five local test servers (``tests/openai_server.py``,
deterministic answers), each with its own latency and stated rate limit (requests a minute, enforced
and sent in the ``x-ratelimit-*`` headers); the models are completion fns of a registry of the run's
own (``lab/m00`` .. ``lab/m49``, each with its ``api_base``), as a lab's registry would name them.
The run is stopped with SIGTERM once the servers answered ``--stop-at`` calls; the resume command it
printed is run against the same servers. Printed: the calls each endpoint answered and at what rate
beside its stated limit, the calls answered by each run and those paid twice, the largest resident
memory of either run, and the seconds ``econarena-report`` takes on the log. Asserts nothing.
"""
from __future__ import annotations

import argparse
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from econarena_evals.core.schedule import table_count  # noqa: E402
from econarena_evals.log.evallog import read_log  # noqa: E402

from conftest import base_env, cli  # noqa: E402
from openai_server import OpenAIServer, RateLimiter  # noqa: E402
from policies import scripted  # noqa: E402

# (seconds per answer, requests a minute) of each endpoint
ENDPOINTS = [(0.02, 6000), (0.05, 4800), (0.1, 3600), (0.2, 3000), (0.3, 2400)]
CELL = "econarena.beauty_L_melee"


def answered(servers: list[OpenAIServer]) -> int:
    return sum(s.answered() for s in servers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--tables-per-player", type=int, default=20)
    parser.add_argument("--stop-at", type=int, default=5000, help="SIGTERM once the servers answered this many")
    parser.add_argument("--threads", type=int, default=20, help="EVALS_THREADS: tables in play at once")
    opts = parser.parse_args()
    names = [f"m{i:02d}" for i in range(opts.models)]
    servers = [OpenAIServer(scripted, models=tuple(n for i, n in enumerate(names) if i % len(ENDPOINTS) == e),
                            latency_s=latency, limiter=RateLimiter(rpm=rpm)).start()
               for e, (latency, rpm) in enumerate(ENDPOINTS)]
    tables = table_count(opts.models, 5, opts.tables_per_player)
    needed = tables * 10 * 5
    with tempfile.TemporaryDirectory() as tmp:
        registry = Path(tmp) / "registry"
        (registry / "completion_fns").mkdir(parents=True)
        (registry / "completion_fns" / "lab.yaml").write_text("".join(
            f"lab/{n}:\n  class: econarena_evals.fns.chat:ChatCompletionFn\n"
            f"  args: {{model: {n}, api_base: '{servers[i % len(ENDPOINTS)].base_url}', api_key: sk-local}}\n"
            for i, n in enumerate(names)), encoding="utf-8")
        env = base_env() | {"EVALS_THREADS": str(opts.threads)}
        first = Path(tmp) / "first.jsonl"
        command = [cli("oaieval"), ",".join(f"lab/{n}" for n in names), CELL, "--registry_path", str(registry),
                   "--record_path", str(first), "--extra_eval_params", f"tables_per_player={opts.tables_per_player}"]
        print(f"{opts.models} models on {len(ENDPOINTS)} endpoints, {tables} tables, {needed} seat calls", flush=True)
        start = time.perf_counter()
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        while answered(servers) < opts.stop_at and proc.poll() is None:
            time.sleep(0.01)
        stopped = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=900)
        time.sleep(0.3)
        first_calls = answered(servers)
        line = next(x for x in err.splitlines() if "resume_from=" in x).strip()
        print(f"first run: SIGTERM after {stopped - start:.1f} s at {opts.stop_at} answered, exit {proc.returncode}, "
              f"{first_calls} answered in all", flush=True)
        resumed_start = time.perf_counter()
        resumed = subprocess.run(["bash", "-c", line], env=env, capture_output=True, text=True, timeout=3600)
        resumed_s = time.perf_counter() - resumed_start
        total = answered(servers)
        second = Path(shlex.split(line)[shlex.split(line).index("--record_path") + 1])
        print(f"resume: exit {resumed.returncode} in {resumed_s:.1f} s, {total - first_calls} answered; "
              f"{total} in all for {needed} needed: paid twice {total - needed}", flush=True)
        for e, ((latency, rpm), server) in enumerate(zip(ENDPOINTS, servers)):
            # the busiest minute's pace: answers in the densest 10 s window, a minute's worth
            times = sorted(r["done"] for r in server.requests if r.get("answered"))
            densest = max((sum(1 for u in times if t <= u < t + 10) for t in times), default=0) * 6
            refused = sum(1 for r in server.requests if not r.get("answered"))
            print(f"  endpoint {e + 1}: latency {latency} s, stated {rpm} requests/min; answered "
                  f"{server.answered()}, refused {refused} (429); busiest 10 s at {densest}/min", flush=True)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"largest resident memory of a child process: {peak:.0f} MB", flush=True)
        log = read_log(second)
        print(f"resumed log: {log.final_report.get('sessions') if log.final_report else None} tables finished, "
              f"{log.final_report.get('errored_sessions') if log.final_report else None} errored", flush=True)
        report_start = time.perf_counter()
        report = subprocess.run([cli("econarena-report"), str(second), "--out", str(Path(tmp) / "report")], env=env,
                                capture_output=True, text=True, timeout=900)
        print(f"econarena-report on the log: exit {report.returncode} in {time.perf_counter() - report_start:.1f} s"
              + (f"\n{report.stdout[-2000:]}{report.stderr[-2000:]}" if report.returncode else ""), flush=True)
    for server in servers:
        server.stop()


if __name__ == "__main__":
    main()
