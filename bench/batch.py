"""Batch mode against the local Batch API: batches, requests and wall time per dev cell.

    python bench/batch.py [--turnaround 5] [--sessions 20] [--cells beauty_L beauty_hist] [--record]

Each cell runs twice through the real ``oaieval`` with ``econarena/chat:gpt-4o``: by batch
(``batch=yes``) against a server whose batches take ``--turnaround`` seconds from create to
completed (a third validating, the rest in progress), and synchronously against the same server
answering each request after ``--latency``. Printed per cell: the batches made, the synchronous chat
requests, the batch API's requests (uploads, creates, retrieves, downloads), the wall time, the
floor (waves x turnaround: a history cell's runs wait for each other's batch) and whether both runs'
final reports are byte-identical. A real API's turnaround is minutes to hours, not seconds: what
carries over is the number of waits in turn, not the seconds (docs/benchmarks.md, "Batch mode").
``--record`` stores the table in bench/figures.json with this command, the date and the load;
``python bench/docs.py --write`` then puts it into the docs.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from docs import record_table  # noqa: E402  (bench/docs.py: this script's folder is on sys.path)
from econarena_evals.core.sessions import waves  # noqa: E402
from econarena_evals.games import cell as game_cell  # noqa: E402
from econarena_evals.log.evallog import read_log  # noqa: E402
from econarena_evals.run.plan import eval_args  # noqa: E402

from openai_server import BatchBehaviour, OpenAIServer  # noqa: E402
from policies import scripted  # noqa: E402

BIN = Path(sys.executable).parent


def run(server: OpenAIServer, cell: str, sessions: int, log: Path, batch: bool) -> float:
    env = dict(os.environ, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-bench", PYTHONPATH=str(ROOT),
               EVALS_SHOW_EVAL_PROGRESS="")
    args = [str(BIN / "oaieval"), "econarena/chat:gpt-4o", f"econarena.{cell}", "--registry_path",
            str(ROOT / "registry"), "--record_path", str(log), "--max_samples", str(sessions)]
    if batch:
        args += ["--completion_args", "batch=yes,batch_poll_s=1"]
    started = time.perf_counter()
    subprocess.run(args, env=env, check=True, capture_output=True, timeout=3600)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turnaround", type=float, default=5.0, help="seconds a batch takes to complete")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds a synchronous request takes")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--cells", nargs="+", default=["beauty_L", "beauty_hist"])
    parser.add_argument("--record", action="store_true", help="store the table in bench/figures.json")
    opts = parser.parse_args()
    rows = []
    behaviour = BatchBehaviour(validate_s=opts.turnaround / 3, run_s=opts.turnaround * 2 / 3)
    print(f"batch turnaround {opts.turnaround:g} s, synchronous latency {opts.latency * 1000:.0f} ms, "
          f"{opts.sessions} sessions a cell, 2 cores")
    print(f"{'cell':<12} {'calls':>6} {'batches':>8} {'sync req':>9} {'batch API req':>14} {'batch s':>8} "
          f"{'floor s':>8} {'sync s':>7} {'same report':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for cell in opts.cells:
            _, args, _ = eval_args(f"econarena.{cell}")
            cfg = game_cell(args)
            floor = len(waves(cfg.runs, cfg.history_runs)) * opts.turnaround
            server = OpenAIServer(scripted, models=("gpt-4o",), latency_s=opts.latency, batch=behaviour).start()
            try:
                batch_log, sync_log = Path(tmp) / f"{cell}.batch.jsonl", Path(tmp) / f"{cell}.sync.jsonl"
                batch_s = run(server, cell, opts.sessions, batch_log, batch=True)
                sync_before = server.sync_chat_requests()
                api_requests = len(server.batch.requests)
                sync_s = run(server, cell, opts.sessions, sync_log, batch=False)
            finally:
                server.stop()
            same = json.dumps(read_log(batch_log).final_report, sort_keys=True) == json.dumps(
                read_log(sync_log).final_report, sort_keys=True)
            print(f"{cell:<12} {server.batch.lines_answered:>6} {len(server.batch.created):>8} {sync_before:>9} "
                  f"{api_requests:>14} {batch_s:>8.1f} {floor:>8.1f} {sync_s:>7.1f} {'yes' if same else 'NO':>12}")
            rows.append([f"`{cell}`", f"{server.batch.lines_answered:,}", str(len(server.batch.created)),
                         str(sync_before), str(api_requests), f"{batch_s:.1f} s", f"{floor:.1f} s", f"{sync_s:.1f} s",
                         "yes" if same else "no"])
    if opts.record:
        columns = ["cell", "calls", "batches", "sync requests", "batch API requests", "batch wall", "floor",
                   "sync wall", "same final report"]
        record_table("batch", columns, rows, command="python " + " ".join(sys.argv),
                     measured=f"{datetime.date.today()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the end")
        print("recorded in bench/figures.json: python bench/docs.py --write puts it into the docs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
