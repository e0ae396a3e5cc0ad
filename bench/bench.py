"""Speed and memory of a session run, measured end to end. Prints figures; asserts nothing.

    python bench/bench.py [--latency 0.2] [--sessions 10] [--threads 10] [--rounds 3] [--quick] [--concurrent-only]
                          [--engine-only] [--test-split]

1. Starts a real OpenAI-compatible HTTP server on 127.0.0.1 that answers every call after
   ``--latency`` seconds with a deterministic policy.
2. Runs the real ``oaieval`` on beauty_L and beauty_hist, ``--sessions`` sessions each, at
   ``EVALS_THREADS=--threads``, twice: one seat call at a time (``max_concurrency=1``) and at the
   default cap; with ``econarena/chat`` (one shared client) and with evals' own ``gpt-4`` fn.
3. Prints wall times (the call phase, timed at the server: first request to last response, and
   the whole oaieval process), the speedup, the critical-path bound and how far from it we are, and a bare openai
   client (one shared client, 256 threads, in a process of its own) firing the same requests, wave
   by wave where the cell shows history: the floor the target "within 1.3x of a bare client" is
   measured against. The concurrent run and the bare client go ``--rounds`` times (3 by default),
   alternating, and the best of each is kept (load only ever adds time; a floor taken in a busy
   minute flatters the ratio), with the machine's one-minute load printed beside every run.
   The bound is one latency per wave of sessions without history (all runs go out at once), and
   runs x latency per wave with history (each run waits for the one before), a wave being
   ceil(sessions / EVALS_THREADS) sessions.
4. Measures the engine's own time per decision (prompt, call plumbing, parse, score, record) with
   an instant in-process player, and its share of the measured wall time.
5. Measures peak memory (max RSS) of oaieval for 100 sessions (the test split).

``--test-split`` instead measures the call path at scale: the 100 sessions of ``beauty_L``'s test
split (5,000 seat calls) with ``econarena/chat``, against a bare openai client in a process of its
own sending the same bodies (the two messages of each seat call, seeds included) from 256 threads
over one shared client. Wall is the call phase at the server; CPU per call is the process's own
CPU (``os.wait4``: user + system, its start-up included) over its calls. Three rounds (``--rounds``),
the side that goes first alternating, and the median of the rounds' ratios is the figure.
"""
from __future__ import annotations

import argparse
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


def child_env(server: OpenAIServer, threads: int, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EVALS_", "ECONARENA_"))}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-local", EVALS_THREADS=str(threads),
               EVALS_SHOW_EVAL_PROGRESS="", PYTHONPATH=str(ROOT), **extra)
    return env


def oaieval(server: OpenAIServer, fn: str, eval_name: str, sessions: int, threads: int, params: str = "") -> dict:
    n0 = len(server.requests)
    with tempfile.TemporaryDirectory() as tmp:
        args = [OAIEVAL, fn, eval_name, "--registry_path", str(ROOT / "registry"), "--record_path", f"{tmp}/log.jsonl",
                "--max_samples", str(sessions)]
        if params:
            args += ["--extra_eval_params", params]
        start = time.perf_counter()
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(args, env=child_env(server, threads), stdout=subprocess.DEVNULL, stderr=err)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
            if status != 0:
                err.seek(0)
                raise SystemExit(err.read().decode("utf-8", "replace")[-3000:])
    reqs = server.requests[n0:]
    return {"calls": len(reqs), "phase": max(r["done"] for r in reqs) - min(r["t"] for r in reqs), "wall": wall,
            "cpu": usage.ru_utime + usage.ru_stime, "bodies": [r["body"] for r in reqs]}


def load() -> float:
    """The machine's one-minute load average: printed beside every figure."""
    return os.getloadavg()[0]


BARE_PROCESS = """
import json, sys
from concurrent.futures import ThreadPoolExecutor
from openai import OpenAI
base_url, bodies_file, concurrency, waves = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with open(bodies_file, encoding="utf-8") as f:
    bodies = json.load(f)
client = OpenAI(base_url=base_url, api_key="sk-local", max_retries=0)
client.models.list()  # connect once, as the eval's start-up does
size = -(-len(bodies) // waves)
with ThreadPoolExecutor(concurrency) as pool:
    for k in range(waves):
        list(pool.map(lambda body: client.chat.completions.create(**body), bodies[k * size:(k + 1) * size]))
"""


def bare_process(server: OpenAIServer, bodies: list, tmp: str, concurrency: int = 256, waves: int = 1) -> dict:
    """The same bodies from a bare openai client in a process of its own (one shared client, a thread
    pool, nothing else), in ``waves`` waves: its call phase at the server and its own CPU time, start-up
    included. In a process of its own as the eval is: a client in this process would share its
    interpreter's lock with the server here, and be slowed by it as the eval is not."""
    import json

    path = Path(tmp) / "bodies.json"
    path.write_text(json.dumps(bodies), encoding="utf-8")
    n0 = len(server.requests)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EVALS_", "ECONARENA_"))}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", BARE_PROCESS, server.base_url, str(path), str(concurrency),
                             str(waves)], env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit("the bare client failed")
    reqs = [r for r in server.requests[n0:] if r["path"].endswith("/chat/completions")]
    return {"calls": len(reqs), "phase": max(r["done"] for r in reqs) - min(r["t"] for r in reqs), "wall": wall,
            "cpu": usage.ru_utime + usage.ru_stime}


def bare_client(server: OpenAIServer, bodies: list, waves: int, concurrency: int = 256) -> float:
    """The same requests from a bare openai client (one shared client, a thread pool, nothing else),
    sent in ``waves`` waves as the run's history allows: the floor the eval is measured against."""
    from concurrent.futures import ThreadPoolExecutor

    from openai import OpenAI

    client = OpenAI(base_url=server.base_url, api_key="sk-local", max_retries=0)
    client.models.list()  # connect once, as the eval's start-up does
    n0 = len(server.requests)
    size = math.ceil(len(bodies) / waves)
    with ThreadPoolExecutor(concurrency) as pool:
        for k in range(waves):
            list(pool.map(lambda body: client.chat.completions.create(**body), bodies[k * size:(k + 1) * size]))
    reqs = server.requests[n0 + 1:] if server.requests[n0]["path"].endswith("/models") else server.requests[n0:]
    reqs = [r for r in reqs if r["path"].endswith("/chat/completions")]
    return max(r["done"] for r in reqs) - min(r["t"] for r in reqs)


def engine_time_per_decision(write_log: bool = False) -> float:
    """CPU seconds of engine work per seat decision, with a player that answers instantly in-process.

    Everything but the model call: prompts, call plumbing (workers, cap, deadline), parsing,
    scoring, metrics and events. With ``write_log`` it includes evals' own serialisation of the
    events to JSONL (evals' cost, not ours); without, events stay in memory.
    """
    from evals.api import CompletionResult
    from evals.base import RunSpec
    from evals.record import LocalRecorder, RecorderBase
    from evals.registry import Registry

    from econarena_evals.run.eval import EconArena

    class Reply(CompletionResult):
        def get_completions(self):
            return ['{"understanding": "u", "choice": 1.5, "reason": "r"}']

    reply = Reply()

    class Instant:
        def __call__(self, prompt, **kwargs):
            return reply

    registry = Registry()
    registry.add_registry_paths([ROOT / "registry"])
    spec = registry.get_eval("econarena.beauty_L.test.v0")
    os.environ["EVALS_SHOW_EVAL_PROGRESS"] = ""
    with tempfile.TemporaryDirectory() as tmp:
        run_spec = RunSpec(completion_fns=["instant"], eval_name=spec.key, base_eval="econarena",
                           split="beauty_L", run_config={}, created_by="")
        recorder = LocalRecorder(f"{tmp}/log.jsonl", run_spec) if write_log else RecorderBase(run_spec)
        ev = EconArena(completion_fns=[Instant()], eval_registry_path=spec.registry_path, name=spec.key, seed=1,
                       **spec.args)
        start = time.process_time()
        report = ev.run(recorder)
        recorder.flush_events()
        elapsed = time.process_time() - start
    assert report["sessions"] == 100
    return elapsed / (100 * 50)


def reference_step_ns() -> float:
    """This machine's speed at plain Python, in ns a step of a fixed loop (the least of five runs):
    the engine's cost in such steps can be set beside a figure of another day or machine (the same
    commit measured 38 µs a decision one day and 98 µs on the next, on a machine twice as slow)."""
    def once() -> float:
        start, total = time.process_time(), 0
        for i in range(2_000_000):
            total += i
        return (time.process_time() - start) / 2_000_000

    return min(once() for _ in range(5)) * 1e9


def engine_cost() -> float:
    """The least of five runs after a warm-up (imports, registry, worker threads): scheduling and
    GC only ever add time."""
    engine_time_per_decision()
    return min(engine_time_per_decision() for _ in range(5))


def peak_rss_mb(server: OpenAIServer, threads: int) -> float:
    """Max RSS of one oaieval child running the 100-session test split of beauty_hist."""
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen(
            [OAIEVAL, "econarena/chat:gpt-4", "econarena.beauty_hist.test.v0", "--registry_path",
             str(ROOT / "registry"), "--record_path", f"{tmp}/log.jsonl"],
            env=child_env(server, threads), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    return usage.ru_maxrss / 1024


def test_split(latency: float, threads: int, rounds: int) -> int:
    """beauty_L's test split (100 sessions, 5,000 seat calls) with econarena/chat against a bare client in
    a process of its own sending the same bodies: wall (call phase at the server) and CPU per call, in
    ``rounds`` rounds whose first side alternates; the median of the rounds' ratios is the figure."""
    import statistics

    server = OpenAIServer(scripted, models=("gpt-4",), latency_s=latency).start()
    print(f"beauty_L test split (100 sessions), server latency {latency * 1000:.0f} ms, EVALS_THREADS={threads}, "
          f"{os.cpu_count()} cores; econarena/chat against a bare client in a process of its own, same bodies",
          flush=True)
    # the bodies the eval sends (the same every run: the seeds are the session's)
    bodies = [b for b in oaieval(server, "econarena/chat:gpt-4", "econarena.beauty_L.test.v0", 100, threads)["bodies"]
              if "messages" in b]
    print(f"warm-up run: {len(bodies)} seat calls", flush=True)
    ratios: dict[str, list[float]] = {"wall": [], "cpu": []}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(rounds):
            got = {}
            for side in (("eval", "bare") if k % 2 == 0 else ("bare", "eval")):
                before = load()
                if side == "eval":
                    r = oaieval(server, "econarena/chat:gpt-4", "econarena.beauty_L.test.v0", 100, threads)
                    r["calls"] = sum(1 for b in r["bodies"] if "messages" in b)
                else:
                    r = bare_process(server, bodies, tmp)
                assert r["calls"] == len(bodies), (side, r["calls"])
                got[side] = r
                print(f"  round {k + 1}, {side}: call phase {r['phase']:.2f} s, "
                      f"{r['cpu'] / r['calls'] * 1e3:.2f} ms CPU per call ({r['cpu']:.1f} s in all, process wall {r['wall']:.1f} s); "
                      f"load {before:.1f}-{load():.1f}", flush=True)
            ratios["wall"].append(got["eval"]["phase"] / got["bare"]["phase"])
            ratios["cpu"].append(got["eval"]["cpu"] / got["bare"]["cpu"])
            print(f"round {k + 1} ({'eval' if k % 2 == 0 else 'bare'} first): wall {ratios['wall'][-1]:.2f}x, "
                  f"CPU per call {ratios['cpu'][-1]:.2f}x the bare client", flush=True)
    server.stop()
    print(f"median of {rounds} rounds: wall {statistics.median(ratios['wall']):.2f}x "
          f"({', '.join(f'{x:.2f}' for x in ratios['wall'])}), CPU per call {statistics.median(ratios['cpu']):.2f}x "
          f"({', '.join(f'{x:.2f}' for x in ratios['cpu'])}); load {load():.1f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--threads", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="skip the serial runs of evals' own fn")
    parser.add_argument("--concurrent-only", action="store_true",
                        help="only the concurrent runs against the bare client: no serial runs, engine time or memory")
    parser.add_argument("--engine-only", action="store_true",
                        help="only the engine's CPU time per decision, without and with the JSONL log")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating rounds of each concurrent run and its bare client (the best of each kept; "
                             "with --test-split, the median of the rounds' ratios)")
    parser.add_argument("--test-split", action="store_true",
                        help="only the 5,000 calls of beauty_L's test split against a bare client in a process of "
                             "its own: wall and CPU per call")
    opts = parser.parse_args()
    if opts.test_split:
        return test_split(opts.latency, opts.threads, opts.rounds)
    if opts.engine_only:
        step = reference_step_ns()
        cost = engine_cost()
        print(f"engine CPU time per decision: {cost * 1e6:.0f} us ({cost * 1e9 / step:,.0f} steps of a plain Python "
              f"loop, which takes {step:.0f} ns a step on this machine); "
              f"{min(engine_time_per_decision(write_log=True) for _ in range(5)) * 1e6:.0f} us with evals writing the JSONL log")
        return 0
    server = OpenAIServer(scripted, models=("gpt-4",), latency_s=opts.latency).start()
    waves = math.ceil(opts.sessions / opts.threads)
    print(f"server latency {opts.latency * 1000:.0f} ms, {opts.sessions} sessions a cell, "
          f"EVALS_THREADS={opts.threads}, {os.cpu_count()} cores; "
          "wall = call phase timed at the server (whole oaieval process in brackets)")
    print(f"{'completion fn':<22} {'cell':<12} {'serial s':>16} {'concurrent s':>16} {'speedup':>8} "
          f"{'bound s':>8} {'x bound':>8} {'bare s':>7} {'x bare':>7}")
    measured_wall = {}
    for fn in ("econarena/chat:gpt-4", "gpt-4"):
        for cell, history_runs in (("beauty_L", 0), ("beauty_hist", 3)):
            bound = waves * opts.latency * (10 if history_runs else 1)
            # alternating rounds of the run and its floor, the best of each kept
            concs, bares = [], []
            for k in range(opts.rounds):
                before = load()
                concs.append(oaieval(server, fn, f"econarena.{cell}", opts.sessions, opts.threads))
                assert concs[-1]["calls"] == opts.sessions * 50, concs[-1]
                # a bare client firing the same requests, run by run where the cell shows history
                with tempfile.TemporaryDirectory() as tmp:
                    bares.append(bare_process(server, [b for b in concs[-1]["bodies"] if "messages" in b], tmp,
                                              waves=10 if history_runs else 1)["phase"])
                print(f"  round {k + 1}: {fn} {cell}: {concs[-1]['phase']:.2f} s, bare {bares[-1]:.2f} s "
                      f"({concs[-1]['phase'] / bares[-1]:.2f}x); load {before:.1f}-{load():.1f}", flush=True)
            conc = min(concs, key=lambda c: c["phase"])
            bare = min(bares)
            if opts.concurrent_only or (opts.quick and fn == "gpt-4"):
                serial = None
            else:
                serial = oaieval(server, fn, f"econarena.{cell}", opts.sessions, opts.threads, "max_concurrency=1")
            measured_wall[(fn, cell)] = conc["phase"]
            serial_txt = f"{serial['phase']:.2f} ({serial['wall']:.1f})" if serial else "skipped"
            speedup = f"{serial['phase'] / conc['phase']:.1f}x" if serial else "-"
            print(f"{fn:<22} {cell:<12} {serial_txt:>16} {conc['phase']:>7.2f} ({conc['wall']:>5.1f}) "
                  f"{speedup:>8} {bound:>8.2f} {conc['phase'] / bound:>7.2f}x {bare:>7.2f} "
                  f"{conc['phase'] / bare:>6.2f}x  (best of {opts.rounds}; load {load():.1f})", flush=True)
    if opts.concurrent_only:
        server.stop()
        return 0
    per_decision = engine_cost()
    with_log = min(engine_time_per_decision(write_log=True) for _ in range(5))
    print(f"\nengine CPU time per decision (instant in-process player, 100 sessions of beauty_L): "
          f"{per_decision * 1e6:.0f} us; {with_log * 1e6:.0f} us with evals writing the JSONL log")
    for (fn, cell), wall in measured_wall.items():
        if fn == "econarena/chat:gpt-4":
            share = per_decision * opts.sessions * 50 / wall
            print(f"  share of the measured {cell} wall time with {fn}: {share * 100:.2f} %")
    print(f"\npeak memory, oaieval with econarena/chat on 100 sessions of beauty_hist: "
          f"{peak_rss_mb(server, opts.threads):.0f} MB max RSS")
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
