"""The eval's overhead against a real model server: calls per second of ``oaieval`` (econarena/chat)
against SmolLM2-135M-Instruct behind llama-cpp-python's server, beside a bare openai client sending
the same requests at the same concurrency. Prints figures; asserts nothing.

    python bench/local_model.py [--sessions 1] [--max-tokens 32] [--concurrency 2] [--rounds 2]

Starts the server with ``scripts/local_model.sh serve`` (set up first if needed) and puts a
recording pass-through proxy in front of it, so both sides are timed at the same place, first
request to last response, as bench/bench.py times them against its fake server (its ``oaieval``
and ``bare_client`` are reused). The bare client replays the eval's own request bodies, seeds
included, so the model writes the same replies. Rounds alternate eval and bare client, so a
change in the machine's load falls on both.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import ROOT, bare_client, oaieval  # noqa: E402

SCRIPT = str(ROOT / "scripts" / "local_model.sh")


class Proxy:
    """Forwards every request to the model server and records when it came and when it was answered."""

    def __init__(self, upstream: str) -> None:
        split = urlsplit(upstream)
        self.host, self.port, self.prefix = split.hostname, split.port, split.path.rstrip("/")
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _forward(self, method: str) -> None:
                t = time.perf_counter()
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                conn = http.client.HTTPConnection(proxy.host, proxy.port, timeout=600)
                path = proxy.prefix + self.path[len("/v1"):] if self.path.startswith("/v1") else self.path
                conn.request(method, path, body=raw or None, headers={"Content-Type": "application/json"})
                answer = conn.getresponse()
                payload = answer.read()
                conn.close()
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.getheader("Content-Type", "application/json"))
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                try:  # the reply's length: the same requests should cost the same tokens on both sides
                    tokens = json.loads(payload)["usage"]["completion_tokens"]
                except (ValueError, KeyError, TypeError):
                    tokens = 0
                with proxy._lock:
                    proxy.requests.append({"path": self.path, "t": t, "done": time.perf_counter(),
                                           "body": json.loads(raw) if raw else {}, "tokens": tokens})

            def do_GET(self) -> None:
                self._forward("GET")

            def do_POST(self) -> None:
                self._forward("POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def stop(self) -> None:
        self._server.shutdown()


def span(calls: list) -> float:
    return max(r["done"] for r in calls) - min(r["t"] for r in calls)


def idle(calls: list) -> float:
    """Seconds between the first request and the last response with no request in flight."""
    edges = sorted([(r["t"], 1) for r in calls] + [(r["done"], -1) for r in calls])
    in_flight, last, total = 0, edges[0][0], 0.0
    for t, step in edges:
        if in_flight == 0:
            total += t - last
        in_flight += step
        last = t
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cell", default="beauty_L")
    parser.add_argument("--sessions", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as state:
        env = dict(os.environ, LOCAL_MODEL_STATE=state)
        upstream = subprocess.run(["bash", SCRIPT, "serve"], env=env, capture_output=True, text=True, check=True)
        try:
            proxy = Proxy(upstream.stdout.strip())
            params = f"max_tokens={opts.max_tokens},max_concurrency={opts.concurrency}"
            fn = "econarena/chat:SmolLM2-135M-Instruct"
            print(f"{opts.cell}, {opts.sessions} session(s), max_tokens {opts.max_tokens}, {opts.concurrency} "
                  f"calls in flight, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at start; "
                  "times at the proxy, first request to last response")
            print(f"{'round':>5} {'calls':>6} {'eval s':>8} {'bare s':>8} {'eval calls/s':>13} {'bare calls/s':>13} "
                  f"{'eval idle s':>11} {'bare idle s':>11} {'eval tok':>8} {'bare tok':>8}")
            bodies: list = []

            def run_eval():
                n0 = len(proxy.requests)
                oaieval(proxy, fn, f"econarena.{opts.cell}", opts.sessions, 10, params)
                # seat calls only, as bare_client counts them: the eval's start-up is not its overhead
                calls = [r for r in proxy.requests[n0:] if r["path"].endswith("/chat/completions")]
                bodies[:] = [r["body"] for r in calls]
                return calls

            def run_bare():
                n0 = len(proxy.requests)
                bare_client(proxy, bodies, 1, concurrency=opts.concurrency)
                return [r for r in proxy.requests[n0:] if r["path"].endswith("/chat/completions")]

            # warm-up (model pages, caches), and the bodies the bare client replays: the same every run,
            # as the seeds are
            run_eval()
            totals = {"eval": 0.0, "bare": 0.0}
            for k in range(opts.rounds):
                # eval first in even rounds, bare first in odd ones: a drift in the machine's load
                # over the rounds falls on both sides alike
                order = ("eval", "bare") if k % 2 == 0 else ("bare", "eval")
                got = {side: (run_eval if side == "eval" else run_bare)() for side in order}
                figures = {side: (span(calls), idle(calls), sum(r["tokens"] for r in calls))
                           for side, calls in got.items()}
                for side in totals:
                    totals[side] += figures[side][0]
                (e, ei, et), (b, bi, bt) = figures["eval"], figures["bare"]
                n = len(got["eval"])
                print(f"{k + 1:>5} {n:>6} {e:>8.1f} {b:>8.1f} {n / e:>13.3f} {n / b:>13.3f} {ei:>11.2f} {bi:>11.2f} "
                      f"{et:>8} {bt:>8}  load {os.getloadavg()[0]:.1f}")
            ratio = totals["bare"] / totals["eval"]
            print(f"eval / bare calls per second over all rounds: {ratio:.3f} (the eval loses "
                  f"{(1 - ratio) * 100:.1f} %); load {os.getloadavg()[0]:.1f} at end. idle = time with no "
                  "call in flight, which leaves the one-at-a-time server with nothing to do")
            proxy.stop()
        finally:
            subprocess.run(["bash", SCRIPT, "stop"], env=env, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
