"""Seat calls: concurrent, capped, retried with backoff, and bounded by a deadline at any load.

Every seat call of every session goes through ``call_all``:

* It waits for a slot of the cap (``slots.Slots``), holding nothing meanwhile.
* A call's deadline (``call_timeout_s``) counts the endpoint's silence, not the time the call waits
  in a server's queue (``concurrency.Concurrency.due``). The caller stops waiting for it at the
  deadline, gives its slot back at once and tells the call to stop retrying.
* Retries are ours (``retry.attempts``): at most ``max_attempts`` tries per call, each class of
  failure treated as ``errors`` says (``endpoints`` runs evals' own OpenAI fns, which would
  otherwise retry forever, one try at a time under this policy).
* A breaker per player (``Breaker``): after ``breaker_threshold`` endpoint failures in a row its
  endpoint is presumed down, and its calls (waiting or queued) fail at once, one probe every
  ``probe_interval_s`` excepted. It acts on this module's groups (it fails their waiting calls), so
  it lives beside them; the breakers of a run belong to the run's call state (``state.CallState.breakers``).

The run hands its call state to every ``call_all``: its policy (the options, read once), its stop,
lanes, breakers, slots and workers are that run's, never another's in the same process.

A call runs on a reused daemon worker, in a copy of the context of the thread that called
``call_all``, taken there and then: evals' ``record_sampling`` inside a completion fn finds the sample
id of the session the call belongs to. (Copied when a slot is handed out instead, on whichever
thread freed that slot, it would carry the sample id of the session that thread last served.)
"""
from __future__ import annotations

import contextvars
import threading
import time
from functools import partial
from typing import Any, Callable, Hashable, Optional, Sequence, Union

from .errors import RunStopped, SeatCallError, described, is_endpoint_failure
from .lanes import lane_for
from .retry import Call, attempts
from .seat_call import SeatCall
from .state import CallState


class Breaker:
    """Consecutive-failure circuit breaker for one player's endpoint.

    When it opens, the calls of that player in flight are failed at once too, and the first probe
    waits ``probe_interval_s``: otherwise sessions starting while the first failures come in would
    each wait out a full deadline on a dead endpoint.
    """

    def __init__(self, threshold: int, probe_interval_s: float) -> None:
        self.threshold, self.probe_interval_s = threshold, probe_interval_s
        self._lock = threading.Lock()
        self._failures = 0
        self._answered = 0  # calls it answered in this run: "never answered" is a wrong address, not a crash
        self._last_error = ""
        self._next_probe = 0.0
        self._waiting: set[tuple[Any, Any]] = set()  # (group, call) of the calls admitted and not yet ended

    def _why(self) -> str:
        since = f"after {self._answered} answered" if self._answered else "none answered in this run"
        return (f"endpoint presumed down after {self._failures} failed calls in a row, {since}; "
                f"last: {self._last_error}")

    def down(self) -> Optional[str]:
        """Why the endpoint is presumed down now; None while it is not."""
        with self._lock:
            return self._why() if self._failures >= self.threshold else None

    def admit(self, group: Any, call: Any) -> Optional[str]:
        """None if ``call`` of ``group`` may go out (it is then tracked); else why it may not."""
        with self._lock:
            if self._failures >= self.threshold:
                now = time.monotonic()
                if now < self._next_probe:
                    return self._why()
                self._next_probe = now + self.probe_interval_s
            self._waiting.add((group, call))
            return None

    def record(self, group: Any, call: Any, result: Union[str, BaseException]) -> None:
        ok = not isinstance(result, BaseException)
        with self._lock:
            if (group, call) not in self._waiting:
                return  # already failed by the breaker opening
            self._waiting.discard((group, call))
            if ok:
                self._failures = 0
                self._answered += 1
                return
            if not is_endpoint_failure(result):  # type: ignore[arg-type]
                return
            self._failures += 1
            self._last_error = described(result)  # type: ignore[arg-type]
            if self._failures != self.threshold:
                return
            self._next_probe = time.monotonic() + self.probe_interval_s
            stranded, self._waiting = self._waiting, set()
            why = self._why()
        for other, call in stranded:
            other.abandon(call, SeatCallError(why))


def breaker_for(call_state: CallState, player: object) -> Breaker:
    """The run's breaker for ``player``. Keyed by id(player), the player kept alive with it, so that
    its id cannot be reused by a new object that would inherit a stale breaker; players are few."""
    with call_state.lock:
        entry = call_state.breakers.get(id(player))
        if entry is None:
            policy = call_state.policy
            breaker = Breaker(policy.breaker_threshold, policy.probe_interval_s)
            entry = call_state.breakers[id(player)] = (player, breaker)
        return entry[1]


def endpoints_down(call_state: CallState) -> list[str]:
    """Why each endpoint of the run that is presumed down now is (one per player whose breaker is open)."""
    with call_state.lock:
        breakers = [breaker for _, breaker in call_state.breakers.values()]
    return [why for why in (b.down() for b in breakers) if why]


class CallGroup:
    """The calls of one ``call_all``, one ``retry.Call`` each: results and slots under one condition."""

    def __init__(self, call_state: CallState) -> None:
        self.call_state = call_state
        self.policy = call_state.policy
        self.slots = call_state.slots  # the run's: a call that outlives its run frees a slot of its own run
        self.cond = threading.Condition()
        self.calls: list[Call] = []
        self.remaining = 0

    def add(self, player: object, run: Callable[[], str], lane: Hashable, cost: float) -> Call:
        call = Call(len(self.calls), run, lane_for(self.call_state, lane), cost, breaker_for(self.call_state, player))
        self.calls.append(call)
        self.remaining += 1
        return call

    def settle(self, call: Call, result: Union[str, BaseException]) -> bool:
        """Record ``call``'s result unless it is settled already; True if this settled it."""
        with self.cond:
            if call.done:
                return False
            call.result, call.done = result, True
            self.remaining -= 1
            if not self.remaining:  # the caller waits for all of them (or a deadline), not each
                self.cond.notify()
            return True

    def release_slot(self, call: Call) -> None:
        """Give ``call``'s slot back once: when it ends, or when the caller stops waiting for it."""
        with self.cond:
            held, call.holds_slot = call.holds_slot, False
        if held:
            self.slots.release()

    def start(self, call: Call) -> bool:
        """``call`` has a slot: send it and return True, unless its player's breaker refuses."""
        with self.cond:
            call.holds_slot = True  # before admitting: a breaker opening now must free it
        refused = call.breaker.admit(self, call)
        if refused is not None:
            with self.cond:
                call.holds_slot = False  # the dispatcher hands this slot on itself
            self.settle(call, SeatCallError(refused))
            return False
        self.call_state.workers.submit(partial(self.make, call))
        return True

    def make(self, call: Call) -> None:
        """On a worker: try ``call`` until it ends by itself, then tell its player's breaker, settle
        it and free its slot.

        The breaker first: once settled, the caller may return and send the next calls, which must
        find the breaker told (settled first, a dead endpoint's next wave raced its breaker). A call
        the caller already stopped waiting for is no longer tracked by the breaker: a no-op there."""
        result = attempts(call, self.call_state)
        if not call.done:
            call.breaker.record(self, call, result)
        self.settle(call, result)
        self.release_slot(call)

    def abandon(self, call: Call, error: SeatCallError) -> bool:
        """Stop waiting for ``call``: it fails with ``error``, stops retrying and frees its slot."""
        call.cancelled = True
        settled = self.settle(call, error)
        self.release_slot(call)
        return settled


def call_all(
    call_state: CallState, calls: Sequence[tuple[object, Callable[[], str]]],
    lanes: Optional[Sequence[Hashable]] = None, costs: Optional[Sequence[float]] = None,
) -> list[Union[str, BaseException]]:
    """Run ``(player, call)`` pairs concurrently under the run's cap, as the run's call state says
    (its policy: tries, deadline, backoff, breakers, patience).

    Each result is the reply or the error; never raises for a failing call. A call past its
    deadline comes back as a ``SeatCallError``, and so does one refused by its player's breaker.
    Returns once every call is settled: none of them is retrying any more.

    ``lanes`` names what shares a rate limit, per call (default: the player); ``costs`` the tokens
    each request reserves against a tokens-per-minute limit (prompt plus ``max_tokens``). A
    ``seat_call.SeatCall`` hears its answers' headers through its lane (``SeatCall.heard``).
    """
    if not calls:
        return []
    if call_state.stopped.is_set():
        return [RunStopped(call_state.stop_reason or "run stopped") for _ in calls]
    group = CallGroup(call_state)
    for k, (player, run) in enumerate(calls):
        # the breaker entry keeps the player alive, so its id names one player
        lane = lanes[k] if lanes is not None else ("player", id(breaker_for(call_state, player)))
        # One context copy per call, taken on this thread: the session's own sample id. Each call gets
        # its own copy because a Context cannot be entered by two threads at once.
        call = group.add(player, partial(contextvars.copy_context().run, run), lane, costs[k] if costs else 0.0)
        if isinstance(run, SeatCall):
            run.lane = call.lane
    group.slots.enqueue([(group, call) for call in group.calls])
    timeout_s = call_state.policy.call_timeout_s
    try:
        while True:
            with group.cond:
                if not group.remaining:
                    break
            # Deadlines move on as the endpoint answers (see ``Concurrency.due``): looked at now. A
            # call not on the wire yet, held or between tries, is bounded where it waits (``attempts``).
            now = time.monotonic()
            look_again = now + timeout_s  # a try sent from now on is due no sooner
            expired = []
            for call in group.calls:
                on_wire = call.on_wire
                if on_wire is None or call.done:
                    continue
                due = call.lane.due(on_wire[0], on_wire[1], timeout_s)
                if due is None:
                    continue
                if due <= now:
                    expired.append((call, on_wire[0]))
                else:
                    look_again = min(look_again, due)
            if not expired:
                with group.cond:
                    if group.remaining:
                        group.cond.wait(look_again - now)
                continue
            for call, ticket in expired:
                # The worker only finishes the try it is in (it cannot be interrupted), then stops;
                # the next call of the lane has its turn meanwhile.
                call.lane.forget(ticket)
                error = SeatCallError(f"no answer within call_timeout_s={timeout_s:g}s")
                if group.abandon(call, error):
                    call.breaker.record(group, call, error)
    finally:
        group.slots.drop(group)
    results = [call.result for call in group.calls]
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]
