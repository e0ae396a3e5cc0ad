"""Stop a full dev cell (quota, Ctrl-C, SIGTERM, kill -9), run the printed resume: what was paid twice.

    python bench/kill_resume.py [--stops quota:beauty_L,ctrl-c:beauty_hist,...] [--at 100] [--latency 0.05]
                                [--threads 10]

Real ``oaieval`` with ``econarena/chat`` against the local test server, which answers
deterministically and counts the whole answers it sends (the calls an API would bill). Each case
stops the run once the server answered ``--at`` calls (``quota``: the key's quota runs out after
``--at`` answers), then runs the resume command the run printed (after ``kill -9``, the one
``econarena-summary`` prints) against a healthy server. Printed per case: calls answered by each run,
the calls needed (an uninterrupted run of the same cell), the calls paid twice, the requests in
flight at the stop, whether the resumed final report is the uninterrupted run's byte for byte, and
the machine's load (one-minute average) before the stop's run and after the resume.
The scenario code is the end-to-end test's (``tests/run/test_stops.py``), at full size.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "run")]

from test_stops import environment, report_bytes, stop_and_resume, uninterrupted  # noqa: E402

from openai_server import OpenAIServer, RateLimiter  # noqa: E402
from policies import scripted  # noqa: E402

DEFAULT = "quota:beauty_L,ctrl-c:beauty_L,sigterm:beauty_L,kill-9:beauty_L," \
          "quota:beauty_hist,ctrl-c:beauty_hist,sigterm:beauty_hist,kill-9:beauty_hist"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stops", default=DEFAULT, help="stop:cell,... (stop: quota, ctrl-c, sigterm, sighup, kill-9)")
    parser.add_argument("--at", type=int, default=100, help="stop once the server answered this many calls")
    parser.add_argument("--latency", type=float, default=0.05, help="server seconds per call")
    parser.add_argument("--threads", type=int, default=10, help="EVALS_THREADS")
    parser.add_argument("--max-concurrency", type=int, default=256, help="ECONARENA_MAX_CONCURRENCY")
    opts = parser.parse_args()
    server = OpenAIServer(scripted, models=("gpt-4",), latency_s=opts.latency, limiter=RateLimiter()).start()
    env = environment(server, opts.threads, opts.max_concurrency)
    references: dict[str, tuple[dict, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in opts.stops.split(","):
            stop, cell = case.split(":")
            eval_name = f"econarena.{cell}"
            if eval_name not in references:
                references[eval_name] = uninterrupted(server, env, eval_name, Path(tmp) / f"{cell}.full.jsonl", None)
            report, needed = references[eval_name]
            where = Path(tmp) / case.replace(":", "_")
            where.mkdir()
            before = os.getloadavg()[0]
            f = stop_and_resume(server, env, eval_name, stop, opts.at, where)
            after = os.getloadavg()[0]
            total = f["answered_first"] + f["answered_resume"]
            row = next((x for x in f["summary"].splitlines() if x.startswith("econarena/chat")), "").split("  ")[-1]
            print(f"{cell} {stop}: exit {f['status']}; first run answered {f['answered_first']} (on disk "
                  f"{f['kept_calls']}), in flight at the stop {f['in_flight_at_stop']}; resume answered "
                  f"{f['answered_resume']}; total {total} for {needed} needed: paid twice {total - needed}; "
                  f"report identical: {report_bytes(f['report']) == report_bytes(report)}; summary status: "
                  f"{row.strip()!r}; load {before:.1f}-{after:.1f}", flush=True)
            print(f"    {f['plan_line'].replace('econarena: plan: ', 'resume plan: ')}", flush=True)
    server.stop()


if __name__ == "__main__":
    main()
