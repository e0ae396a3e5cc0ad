"""Runs against a rate-limited endpoint, through the real oaieval: do they finish, how fast, how many requests?

A local OpenAI-compatible server limits requests and tokens per minute the way the OpenAI API
does (``tests/openai_server.py``: ``RateLimiter``): continuously refilled buckets holding one
second's worth, refused requests counted against the limit, HTTP 429 with the API's body and
``retry-after`` / ``retry-after-ms`` / ``x-ratelimit-*`` headers, a quota that runs out.

    python bench/rate_limits.py            # every scenario (about 4 minutes)
    python bench/rate_limits.py quota      # the ones whose name contains "quota"

Prints one line per scenario: sessions finished, wall time against the minimum the limit allows,
requests sent per seat call, refusals, exit status, and the machine's load (one-minute average)
before and after the run.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from openai_server import OpenAIServer, RateLimiter  # noqa: E402
from policies import scripted  # noqa: E402

# name, completion fn (+ args), eval, max_samples, limiter kwargs
SCENARIOS = [
    ("600 rpm, econarena/chat:gpt-4o, beauty_L (20 sessions)", ["econarena/chat:gpt-4o"], "beauty_L", None,
     dict(rpm=600)),
    ("1200 rpm, gpt-4 (evals' fn), beauty_hist (10 sessions)", ["gpt-4"], "beauty_hist", 10, dict(rpm=1200)),
    ("400k tpm, econarena/chat:gpt-4o, beauty_L (4 sessions)", ["econarena/chat:gpt-4o"], "beauty_L", 4,
     dict(tpm=400_000)),
    ("3000 rpm, gpt-4 (evals' fn), beauty_L (20 sessions)", ["gpt-4"], "beauty_L", None, dict(rpm=3000)),
    ("quota after 150 requests, econarena/chat:gpt-4o, beauty_L", ["econarena/chat:gpt-4o"], "beauty_L", None,
     dict(rpm=6000, quota_requests=150)),
]


def run(name, fn, cell, max_samples, limits) -> dict:
    limiter = RateLimiter(**limits)
    server = OpenAIServer(scripted, models=("gpt-4", "gpt-4o"), limiter=limiter).start()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.jsonl"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ECONARENA_", "EVALS_"))}
        env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-bench", PYTHONPATH=str(ROOT),
                   EVALS_SHOW_EVAL_PROGRESS="")
        args = [str(Path(sys.executable).parent / "oaieval"), *fn, f"econarena.{cell}", "--record_path", str(log)]
        if max_samples:
            args += ["--max_samples", str(max_samples)]
        load_before = os.getloadavg()[0]
        start = time.monotonic()
        proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=1800)
        wall = time.monotonic() - start
        load_after = os.getloadavg()[0]
        rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    server.stop()
    sessions = [r["data"] for r in rows if r.get("type") == "econarena_session"]
    finished = sum(not s["errored"] for s in sessions)
    calls = len(sessions) * 50
    # the fewest seconds the limit allows for the calls answered
    tokens = sum(len("\n".join(m["content"] for m in r["data"]["prompt"])) / 4 + 1024
                 for r in rows if r.get("type") == "sampling")
    minimum = max(limiter.answered / (limits["rpm"] / 60) if limits.get("rpm") else 0,
                  tokens / (limits["tpm"] / 60) if limits.get("tpm") else 0)
    plan = next((line for line in proc.stderr.splitlines() if line.startswith("econarena: plan")), "")
    stopped = next((line for line in proc.stderr.splitlines() if line.startswith("econarena: stopped")), "")
    after_quota = (limiter.count - limiter.first_quota_refusal) if limiter.first_quota_refusal else None
    return dict(name=name, finished=f"{finished} of {len(sessions)}", wall_s=round(wall, 1),
                minimum_s=round(minimum, 1), load_before=round(load_before, 1), load_after=round(load_after, 1),
                requests=limiter.count, seat_calls=calls,
                requests_per_call=round(limiter.count / calls, 3) if calls else None, refused=limiter.refused,
                quota_refused=limiter.quota_refused, sent_after_first_quota_error=after_quota,
                exit=proc.returncode, plan=plan, stopped=stopped)


def main() -> None:
    wanted = sys.argv[1:]
    for scenario in SCENARIOS:
        if wanted and not any(w in scenario[0] for w in wanted):
            continue
        print(json.dumps(run(*scenario)), flush=True)


if __name__ == "__main__":
    main()
