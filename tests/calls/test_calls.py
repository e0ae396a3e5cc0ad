"""Seat-call plumbing in-process: order, retries, deadlines, the breaker and contextvars."""
import contextvars
import threading
import time

from econarena_evals.calls.concurrency import OPEN_WIDE, SLOW_START
from econarena_evals.calls.dispatch import call_all
from econarena_evals.calls.errors import SeatCallError
from econarena_evals.calls.lanes import lane_for
from econarena_evals.calls.policy import CallPolicy
from econarena_evals.calls.state import CallState

from openai_server import FifoSlots

FAST = dict(backoff_base_s=0.001, backoff_cap_s=0.002)
# The deadline of the deadline tests: many times the 0.05 s a stand-in server takes per call, so
# that a busy machine's scheduling delays (a few hundred ms at load 10) cannot pass for silence.
DEADLINE_S = 1.5


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
    assert call_all(CallState(CallPolicy(**FAST)), calls) == [f"reply {k}" for k in range(40)]


def test_transient_errors_are_retried_and_others_are_not():
    flaky = Flaky(2, ConnectionError("reset"))
    assert call_all(CallState(CallPolicy(max_attempts=3, **FAST)), [(object(), flaky)]) == ["ok"] and flaky.calls == 3
    broken = Flaky(5, ValueError("bad request"))
    [result] = call_all(CallState(CallPolicy(max_attempts=3, **FAST)), [(object(), broken)])
    assert isinstance(result, ValueError) and broken.calls == 1
    stubborn = Flaky(5, TimeoutError("slow"))
    [result] = call_all(CallState(CallPolicy(max_attempts=3, **FAST)), [(object(), stubborn)])
    assert isinstance(result, TimeoutError) and stubborn.calls == 3


def test_a_call_past_its_deadline_is_an_error_and_the_rest_still_answer():
    release = threading.Event()
    player = object()
    calls = [(player, lambda: release.wait(30) and "late"), (player, lambda: "fast")]
    results = call_all(CallState(CallPolicy(call_timeout_s=0.2, **FAST)), calls)
    release.set()
    assert isinstance(results[0], SeatCallError) and "call_timeout_s" in str(results[0])
    assert results[1] == "fast"


def test_breaker_opens_after_consecutive_failures_and_fails_fast():
    dead = Flaky(10**6, ConnectionError("refused"))
    player = object()
    policy = CallPolicy(max_attempts=1, breaker_threshold=5, probe_interval_s=60, **FAST)
    calls = CallState(policy)
    first = call_all(calls, [(player, dead)] * 5)
    assert all(isinstance(r, ConnectionError) for r in first) and dead.calls == 5, first
    later = call_all(calls, [(player, dead)] * 5)
    assert all(isinstance(r, SeatCallError) and "presumed down" in str(r) for r in later), later
    assert dead.calls == 5  # nothing more reached the dead endpoint
    # another player's breaker is its own
    assert call_all(calls, [(object(), lambda: "fine")]) == ["fine"]


def test_successes_reset_the_breaker():
    player = object()
    policy = CallPolicy(max_attempts=1, breaker_threshold=3, **FAST)
    calls = CallState(policy)
    for _ in range(5):
        call_all(calls, [(player, Flaky(1, ConnectionError("x")))] * 2)  # one failure, one success
    assert call_all(calls, [(player, lambda: "still admitted")]) == ["still admitted"]


def test_calls_see_the_callers_context():
    var = contextvars.ContextVar("sample_id", default=None)
    var.set("econarena.beauty_L.7")
    assert call_all(CallState(CallPolicy(**FAST)), [(object(), var.get)] * 3) == ["econarena.beauty_L.7"] * 3


def test_each_call_runs_in_its_own_callers_context_when_slots_pass_between_sessions():
    """Eight sessions share a cap of 3: a slot freed by one session's call is handed to another's.
    Each call must still see its own session's context (the sample id evals records under)."""
    var = contextvars.ContextVar("sample_id", default=None)
    seen: dict[int, list] = {}
    policy = CallPolicy(max_concurrency=3, **FAST)
    calls = CallState(policy)

    def session(k):
        var.set(f"s{k}")
        seen[k] = call_all(calls, [(object(), lambda: (time.sleep(0.001), var.get())[1])] * 20)

    threads = [threading.Thread(target=session, args=(k,), daemon=True) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert {k: set(v) for k, v in seen.items()} == {k: {f"s{k}"} for k in range(8)}


def _run_sessions(n_sessions, calls_per_session, make_call, calls, player):
    """n_sessions threads, each one call_all of calls_per_session calls; their results."""
    results = [None] * n_sessions

    def session(k):
        results[k] = call_all(calls, [(player, make_call)] * calls_per_session)

    threads = [threading.Thread(target=session, args=(k,), daemon=True) for k in range(n_sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)  # liveness: a hang fails the test instead of stalling it
    assert not any(t.is_alive() for t in threads), "call_all hung"
    return results


def test_more_calls_than_slots_with_calls_that_never_answer_still_ends():
    """Ten sessions of 50 calls against a cap of 8 and an endpoint that never answers: every
    session ends, every call is a SeatCallError, and no thread waits for a slot forever."""
    hang = threading.Event()
    sent = []

    def never():
        sent.append(1)
        hang.wait(30)
        return "late"

    policy = CallPolicy(max_concurrency=8, call_timeout_s=0.2, breaker_threshold=20, probe_interval_s=60, **FAST)
    results = _run_sessions(10, 50, never, CallState(policy), object())
    hang.set()
    assert all(isinstance(r, SeatCallError) for rs in results for r in rs)
    # the breaker opened after 20 timeouts: the queued calls were refused without being sent
    assert len(sent) < 40, len(sent)


def test_a_call_waiting_for_a_slot_holds_none():
    """Cap 1: a hanging call gives its slot up at its deadline, and the queued call then answers."""
    release = threading.Event()
    policy = CallPolicy(max_concurrency=1, call_timeout_s=0.3, breaker_threshold=100, **FAST)
    calls = CallState(policy)
    slow_player, fast_player = object(), object()
    first = {}
    t = threading.Thread(target=lambda: first.update(r=call_all(calls, [(slow_player,
                                                                         lambda: release.wait(30) and "x")])),
                         daemon=True)
    t.start()
    time.sleep(0.05)
    assert call_all(calls, [(fast_player, lambda: "fast")]) == ["fast"]
    t.join(10)
    release.set()
    assert isinstance(first["r"][0], SeatCallError)


def test_tries_per_call_never_exceed_max_attempts_under_load():
    tries = []

    def always_500():
        tries.append(1)
        raise ConnectionError("HTTP 500")

    policy = CallPolicy(max_concurrency=16, max_attempts=3, breaker_threshold=10**6, **FAST)
    results = _run_sessions(10, 50, always_500, CallState(policy), object())
    assert all(isinstance(r, ConnectionError) for rs in results for r in rs)
    assert len(tries) == 10 * 50 * 3


def test_a_completion_fn_bug_does_not_open_the_breaker():
    player = object()
    policy = CallPolicy(max_attempts=1, breaker_threshold=2, **FAST)
    calls = CallState(policy)

    def bad_signature():
        raise TypeError("__call__() got an unexpected keyword argument 'seed'")

    for _ in range(3):
        [r] = call_all(calls, [(player, bad_signature)])
        assert isinstance(r, TypeError)
    assert call_all(calls, [(player, lambda: "ok")]) == ["ok"]


class Slots:
    """A server in-process that decodes ``slots`` calls at a time, ``decode_s`` each; the rest wait in turn."""

    def __init__(self, slots, decode_s, late_after=20):
        self.sem, self.decode_s = FifoSlots(slots), decode_s
        self.lock = threading.Lock()
        self.held = self.most_held = self.calls = 0
        self.late_after = late_after
        self.held_late = []  # calls held at once, seen by each call after the first late_after

    def __call__(self):
        with self.lock:
            self.calls += 1
            self.held += 1
            self.most_held = max(self.most_held, self.held)
            if self.calls > self.late_after:
                self.held_late.append(self.held)
        with self.sem:
            time.sleep(self.decode_s)
        with self.lock:
            self.held -= 1
        return "ok"


def test_a_lane_keeps_in_flight_what_a_one_slot_server_serves():
    # late: after the opening burst and the few its first answers may add (an answer back within
    # the latency slack of the first reads as unqueued)
    server = Slots(1, 0.04, late_after=OPEN_WIDE + 10)
    lane = f"one-slot-{time.monotonic()}"
    n = OPEN_WIDE + 70
    calls = CallState(CallPolicy(**FAST))
    results = call_all(calls, [(object(), server)] * n, [lane] * n)
    assert results == ["ok"] * n
    # The opening burst (after the first answer) waited in the server's queue; once its answers came back slower and slower,
    # the lane sent the rest a call or two ahead of the one decoding, probing for one more now and
    # then (without the limit: every call of the batch held at once).
    assert max(server.held_late) <= 6, server.held_late
    assert calls.served[lane] is lane_for(calls, lane)
    # a one-slot server decoding 0.04 s a call serves at most 25 a second, whatever the machine's load
    # (how many it serves at once, about one, is estimated from latencies a busy machine inflates:
    # bench/, not here)
    served, per_s = lane_for(calls, lane).served()
    assert per_s <= 1 / 0.04 and served > 0


def test_a_server_that_serves_every_call_at_once_is_never_cut():
    # half a second a call: a busy machine's scheduling delays (tenths of a second with 600 threads at
    # load 8) stay well inside the tolerance, so only a queue could read as one
    server = Slots(10**6, 0.5)
    lane = f"wide-{time.monotonic()}"
    calls = CallState(CallPolicy(**FAST))
    assert call_all(calls, [(object(), server)] * 600, [lane] * 600) == ["ok"] * 600
    assert lane_for(calls, lane).concurrency.cut_at_sent is None
    # the lane's limit grew past the process-wide cap, so the cap, not the lane, bounded it (how many
    # were held at one instant depends on the machine's load: no lower bound here)
    assert lane_for(calls, lane).concurrency.limit >= 256 and server.most_held <= 256


def test_calls_held_back_by_a_silent_endpoint_fail_at_the_deadline_without_being_sent():
    """An endpoint that takes requests and never answers: the calls held back by the lane's limit
    fail with the ones in flight, not one deadline later each."""
    hang, sent = threading.Event(), []

    def never():
        sent.append(1)
        hang.wait(30)
        return "late"

    calls = CallState(CallPolicy(call_timeout_s=DEADLINE_S, breaker_threshold=10**6, **FAST))
    n = SLOW_START + 40
    results = call_all(calls, [(object(), never)] * n, [f"silent-{time.monotonic()}"] * n)
    hang.set()
    assert all(isinstance(r, SeatCallError) and "call_timeout_s" in str(r) for r in results)
    assert len(sent) == SLOW_START  # the first window only


def test_a_call_queued_behind_others_longer_than_the_deadline_does_not_time_out():
    """A one-slot server working through the opening burst: the last call waits far longer than
    call_timeout_s in its queue, yet the server is answering all along, so none times out."""
    server = Slots(1, 0.05)
    n = int(4 * DEADLINE_S / 0.05)  # the last waits four deadlines
    results = call_all(CallState(CallPolicy(call_timeout_s=DEADLINE_S, **FAST)), [(object(), server)] * n,
                       [f"queue-{time.monotonic()}"] * n)
    assert results == ["ok"] * n and server.calls == n  # none given up on, none sent again


def test_the_oldest_call_does_not_time_out_when_later_ones_reached_the_server_first():
    """Requests reach a server in about the order they were sent, not exactly: here in reverse. The
    oldest call's own clock starts only once as many calls as were in flight with it were answered."""
    server = Slots(1, 0.05)
    n = int(2 * DEADLINE_S / 0.05)  # served last, the oldest waits two deadlines

    def arrive_late(k):
        time.sleep((n - k) * 0.005)
        return server()

    results = call_all(CallState(CallPolicy(call_timeout_s=DEADLINE_S, **FAST)),
                       [(object(), (lambda k=k: arrive_late(k))) for k in range(n)],
                       [f"reversed-{time.monotonic()}"] * n)
    assert results == ["ok"] * n and server.calls == n


def test_a_call_the_server_hangs_on_fails_at_its_turn_while_the_others_are_answered():
    """The deadline counts the endpoint's silence, but not for a call it never answers while
    answering the others: once every call sent before it has ended, its own turn runs out."""
    hang = threading.Event()

    def stuck():
        hang.wait(30)
        return "late"

    def quick():
        time.sleep(0.02)
        return "ok"

    player, lane = object(), f"stuck-{time.monotonic()}"
    calls = [(player, quick)] * 5 + [(player, stuck)] + [(player, quick)] * 5
    results = call_all(CallState(CallPolicy(call_timeout_s=DEADLINE_S, breaker_threshold=10**6, **FAST)), calls,
                       [lane] * len(calls))
    hang.set()
    assert results[:5] == ["ok"] * 5 and results[6:] == ["ok"] * 5
    assert isinstance(results[5], SeatCallError) and "call_timeout_s" in str(results[5])
