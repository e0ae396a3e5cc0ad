"""Seat-call plumbing in-process: order, retries, deadlines, the breaker and contextvars."""
import contextvars
import threading

from econarena_evals.calls import CallPolicy, SeatCallError, call_all

FAST = dict(backoff_base_s=0.001, backoff_cap_s=0.002)


class Flaky:
    """Fails with ``exc`` the first ``failures`` times, then answers."""

    def __init__(self, failures, exc):
        self.failures, self.exc, self.calls = failures, exc, 0
        self.lock = threading.Lock()

    def __call__(self):
        with self.lock:
            self.calls += 1
            if self.calls <= self.failures:
                raise self.exc
        return "ok"


def test_replies_come_back_in_order():
    player = object()
    calls = [(player, (lambda k=k: f"reply {k}")) for k in range(40)]
    assert call_all(calls, CallPolicy(**FAST)) == [f"reply {k}" for k in range(40)]


def test_transient_errors_are_retried_and_others_are_not():
    flaky = Flaky(2, ConnectionError("reset"))
    assert call_all([(object(), flaky)], CallPolicy(max_attempts=3, **FAST)) == ["ok"] and flaky.calls == 3
    broken = Flaky(5, ValueError("bad request"))
    [result] = call_all([(object(), broken)], CallPolicy(max_attempts=3, **FAST))
    assert isinstance(result, ValueError) and broken.calls == 1
    stubborn = Flaky(5, TimeoutError("slow"))
    [result] = call_all([(object(), stubborn)], CallPolicy(max_attempts=3, **FAST))
    assert isinstance(result, TimeoutError) and stubborn.calls == 3


def test_a_call_past_its_deadline_is_an_error_and_the_rest_still_answer():
    release = threading.Event()
    player = object()
    calls = [(player, lambda: release.wait(30) and "late"), (player, lambda: "fast")]
    results = call_all(calls, CallPolicy(call_timeout_s=0.2, **FAST))
    release.set()
    assert isinstance(results[0], SeatCallError) and "call_timeout_s" in str(results[0])
    assert results[1] == "fast"


def test_breaker_opens_after_consecutive_failures_and_fails_fast():
    dead = Flaky(10**6, ConnectionError("refused"))
    player = object()
    policy = CallPolicy(max_attempts=1, breaker_threshold=5, probe_interval_s=60, **FAST)
    first = call_all([(player, dead)] * 5, policy)
    assert all(isinstance(r, ConnectionError) for r in first) and dead.calls == 5
    later = call_all([(player, dead)] * 5, policy)
    assert all(isinstance(r, SeatCallError) and "taken for down" in str(r) for r in later)
    assert dead.calls == 5  # nothing more reached the dead endpoint
    # another player's breaker is its own
    assert call_all([(object(), lambda: "fine")], policy) == ["fine"]


def test_successes_reset_the_breaker():
    player = object()
    policy = CallPolicy(max_attempts=1, breaker_threshold=3, **FAST)
    for _ in range(5):
        call_all([(player, Flaky(1, ConnectionError("x")))] * 2, policy)  # one failure, one success
    assert call_all([(player, lambda: "still admitted")], policy) == ["still admitted"]


def test_calls_see_the_callers_context():
    var = contextvars.ContextVar("sample_id", default=None)
    var.set("econarena.beauty_L.7")
    assert call_all([(object(), var.get)] * 3, CallPolicy(**FAST)) == ["econarena.beauty_L.7"] * 3
