"""The progress line says when the run waits on its endpoint: a run at 0 calls/min otherwise looks stuck."""
from __future__ import annotations

from econarena_evals.calls.lanes import lane_for
from econarena_evals.calls.state import CALL_STATE
from econarena_evals.run.progress import Progress


def progress_line() -> str:
    return Progress("econarena.beauty_L.dev.v0", 20, 1000, lambda: 0, lambda rpm, tpm: None, every_s=60).line()


def test_an_overloaded_endpoint_is_said_until_it_answers_again():
    CALL_STATE.reset()
    assert "waiting" not in progress_line()
    lane = lane_for(("https://api.example", "key", "claude-x"))
    lane.overloaded(None, "", 1.0, 20.0)  # a 529 without retry-after: the lane pauses, then probes
    assert ", waiting: the endpoint is overloaded (503/529), no answer for 0m0" in progress_line()
    lane.end(None, 0.5, answered=True)  # a probe was answered: the storm is over
    assert "waiting" not in progress_line()
    CALL_STATE.reset()


def test_a_refusal_is_said_while_its_pause_lasts():
    CALL_STATE.reset()
    lane = lane_for(("https://api.example", "key", "gpt-x"))
    lane.refused(30.0)
    assert ", waiting: the endpoint is rate limited (429), no answer for" in progress_line()
    lane.end(None, 0.5, answered=True)  # an answer (a call sent before the refusal): no longer waiting on it
    assert "waiting" not in progress_line()
    CALL_STATE.reset()
