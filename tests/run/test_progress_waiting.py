"""The progress line says when the run waits on its endpoint: a run at 0 calls/min otherwise looks stuck."""
from __future__ import annotations

import re
import time

from econarena_evals.calls.lanes import lane_for
from econarena_evals.calls.state import CallState
from econarena_evals.run.progress import Progress


def progress_line(calls: CallState) -> str:
    return Progress("econarena.beauty_L.dev.v0", 20, 1000, lambda: 0, lambda rpm, tpm: None, calls, every_s=60).line()


def test_an_overloaded_endpoint_is_said_until_it_answers_again():
    calls = CallState()
    assert "waiting" not in progress_line(calls)
    lane = lane_for(calls, ("https://api.example", "key", "claude-x"))
    lane.overloaded(None, "", 1.0, 20.0)  # a 529 without retry-after: the lane pauses, then probes
    assert ", waiting: the endpoint is overloaded (503/529), no answer for 0m0" in progress_line(calls)
    lane.end(None, 0.5, answered=True)  # a probe was answered: the storm is over
    assert "waiting" not in progress_line(calls)


def test_a_refusal_is_said_while_its_pause_lasts():
    calls = CallState()
    lane = lane_for(calls, ("https://api.example", "key", "gpt-x"))
    lane.refused(30.0)
    assert ", waiting: the endpoint is rate limited (429), no answer for" in progress_line(calls)
    lane.end(None, 0.5, answered=True)  # an answer (a call sent before the refusal): no longer waiting on it
    assert "waiting" not in progress_line(calls)


IN_FLIGHT = re.compile(r"(\d+) in flight \(limit (\d+)\)")


def test_in_flight_is_never_above_the_limit_printed_beside_it():
    """Six tries out on a lane whose limit was then cut to 2, two of them past their deadline (given
    up on, the endpoint still on them): said as what they are, not "6 in flight (limit 2)"."""
    calls = CallState()
    lane = lane_for(calls, ("http://127.0.0.1:8000/v1", "key", "local-x"))
    now = time.monotonic()
    flow = lane.concurrency
    tickets = [flow.send(now) for _ in range(6)]
    flow.limit, flow.cut_at_sent = 1.6, flow.sent  # the server's pace was learned: about one at a time, plus one
    lane.forget(tickets[0])
    lane.forget(tickets[1])
    line = progress_line(calls)
    assert ", 2 in flight (limit 2) and 2 sent before the limit was cut, 2 given up on still at the endpoint" in line
    assert all(int(n) <= int(limit) for n, limit in IN_FLIGHT.findall(line)), line
    for ticket in tickets[2:]:
        lane.end(ticket, heard=True)  # an error status: ended, the limit left as it is
    line = progress_line(calls)
    assert ", 0 in flight (limit 2), 2 given up on still at the endpoint" in line, line
