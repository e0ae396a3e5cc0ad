"""A healthy local server that decodes a few requests at a time is played at its own pace.

Through the real ``oaieval`` against a server on 127.0.0.1 that decodes ``slots`` requests at once,
``decode_s`` each, the others waiting in its queue (llama.cpp's slots, ``OLLAMA_NUM_PARALLEL``).
Sent everything at once, the calls at the back of its queue would pass their deadline although the
server is busy on them; the lane keeps in flight what the server serves instead. The short deadline
is one the whole run's work would exceed, so sending it all at once would fail these runs.
bench/local_server.py prints the wall times against what the slots allow (docs/benchmarks.md).
"""
from __future__ import annotations

import pytest

from econarena_evals.calls.concurrency import OPEN_WIDE, SLOW_START_GROWTH
from econarena_evals.log.evallog import read_log
from econarena_evals.log.filing import filing_problems

from conftest import REGISTRY, base_env, cli, run_cli
from openai_server import OpenAIServer
from policies import scripted

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

# (slots, seconds a request decodes, sessions): the whole run's work is 5 s on one slot, 3.75 s on four
SERVERS = {1: (0.05, 2), 4: (0.1, 3)}  # the opening burst alone waits 3.2 s and 1.6 s in them
SHORT_DEADLINE_S = 2


@pytest.mark.parametrize("slots", [1, 4])
@pytest.mark.parametrize("cell", ["beauty_L", "beauty_hist"])
@pytest.mark.parametrize("fn,deadline", [("gpt-4", None), ("econarena/chat:gpt-4o", SHORT_DEADLINE_S)])
def test_a_server_with_few_slots_is_played_at_its_pace(slots, cell, fn, deadline, tmp_path):
    decode_s, sessions = SERVERS[slots]
    server = OpenAIServer(scripted, models=("gpt-4",), slots=slots, decode_s=decode_s).start()
    try:
        env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-local"}
        log = tmp_path / "log.jsonl"
        args = [cli("oaieval"), fn, f"econarena.{cell}", "--registry_path", str(REGISTRY), "--record_path", str(log),
                "--max_samples", str(sessions)]
        if deadline is not None:
            args += ["--extra_eval_params", f"call_timeout_s={deadline}"]
        run_cli(args, env, timeout=180)  # exit 0: every session finished
        seat_calls = sessions * 50
        assert seat_calls * decode_s / slots > SHORT_DEADLINE_S  # all sent at once, the last ones would time out
    finally:
        server.stop()
    report = read_log(log).final_report
    assert report["sessions"] == sessions and report["errored_sessions"] == 0
    assert len(server.requests) <= 1.2 * seat_calls  # no call timed out and was sent again
    assert server.most_decoding == slots  # the server really decoded that many at a time
    # what waited in the server's queue: the opening burst and what the answers of the first decode
    # round (which did not queue) added, then about what it serves plus a probe; sent all at once,
    # every call of a cell without history would have waited there. Those calls at the back of the
    # queue waited past the short deadline, yet none was given up on and sent again (above).
    assert server.most_held <= OPEN_WIDE + SLOW_START_GROWTH * slots < seat_calls, server.most_held
    assert filing_problems(log) == []
