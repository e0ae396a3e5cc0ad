"""The inspect front end against a rate-limited stand-in endpoint, through the real `inspect eval`:
requests sent per seat call at a stated limit, and what a used-up quota costs.

Run it with the inspect venv's Python (bash scripts/test_inspect.sh makes .venv-inspect):

    .venv-inspect/bin/python bench/inspect_limits.py                  # econarena/chat/gpt-4o (paced)
    .venv-inspect/bin/python bench/inspect_limits.py openai-api/gpt-4o  # inspect's own provider, to compare

Prints one line per scenario: seat calls, requests, refusals, wall time, the log's status. Nothing
asserts them (tests_inspect/ holds the bounds).
"""
from __future__ import annotations

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

SCENARIOS = (("300 requests/min, 2 sessions (100 calls)", {"rpm": 300}, ["--limit", "2"]),
             ("quota used up after 30 requests", {"quota_requests": 30}, []))


def main() -> None:
    model = sys.argv[1] if len(sys.argv) > 1 else "econarena/chat/gpt-4o"
    inspect = Path(sys.executable).parent / "inspect"
    for name, limits, extra in SCENARIOS:
        limiter = RateLimiter(**limits)
        server = OpenAIServer(scripted, models=("gpt-4o",), limiter=limiter).start()
        env = {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.base_url}
        with tempfile.TemporaryDirectory() as logs:
            started = time.monotonic()
            try:
                done = subprocess.run([str(inspect), "eval", "econarena_evals/beauty_L", "--model", model,
                                       "--log-dir", logs, "--display", "none", *extra],
                                      env=env, capture_output=True, text=True, timeout=600)
                ended = f"exit {done.returncode}"
            except subprocess.TimeoutExpired:
                ended = "killed after 600 s"
            took = time.monotonic() - started
            from inspect_ai.log import list_eval_logs, read_eval_log

            status = [read_eval_log(i, header_only=True).status for i in list_eval_logs(logs)]
        server.stop()
        after = "" if limiter.first_quota_refusal is None else \
            f", {limiter.count - limiter.first_quota_refusal} after the first quota refusal"
        print(f"{model}: {name}: {limiter.answered} answered, {limiter.count} requests "
              f"({limiter.refused} refused by the rate limit, {limiter.quota_refused} by the quota{after}), "
              f"{took:.0f} s, {ended}, log {status}", flush=True)


if __name__ == "__main__":
    main()
