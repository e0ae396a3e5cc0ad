"""Seat calls: concurrent, capped, retried with backoff, and bounded by a deadline at any load.

Every seat call of every session goes through ``call_all``:

* It waits for a slot of the cap (``slots.Slots``), holding nothing meanwhile.
* A call's deadline (``call_timeout_s``) counts the endpoint's silence, not the time the call waits
  in a server's queue (``lanes.Lane.due``). The caller stops waiting for it at the deadline, gives
  its slot back at once and tells the call to stop retrying.
* Retries are ours (``attempts``): at most ``max_attempts`` tries per call, each class of failure
  treated as ``errors`` says (``endpoints`` runs evals' own OpenAI fns, which would otherwise retry
  forever, one try at a time under this policy).
* A breaker per player (``breaker``): its calls fail at once while its endpoint is taken for down.

A call runs on a reused daemon worker, in a copy of the context of the thread that called
``call_all``, taken there and then: evals' ``record_sampling`` inside a completion fn finds the sample
id of the session the call belongs to. (Copied when a slot is handed out instead, on whichever
thread freed that slot, it would carry the sample id of the session that thread last served.)
"""
from __future__ import annotations

import contextvars
import random
import threading
import time
from functools import partial
from typing import Callable, Hashable, Optional, Sequence, Union

from .breaker import breaker_for
from .errors import (
    RetryNow,
    RunStopped,
    SeatCallError,
    fatal,
    headers_of,
    is_overloaded,
    is_rate_limited,
    is_transient,
    server_wait_said,
    status_of,
)
from .lanes import CURRENT, Lane, lane_for
from .policy import CallPolicy
from .state import RUN, stop_run

# A try that failed while its lane answered other calls (a flaky endpoint that lives: a gateway's
# share of 500s) costs 1/LIVE_SHARE of a try, so such a call gets LIVE_SHARE times max_attempts
# tries; one that failed with no answer on the lane meanwhile (a dead or always-failing endpoint)
# costs a whole one, as before. Either way a request that always fails ends.
LIVE_SHARE = 4


class Batch:
    """The calls of one ``call_all``: results, deadlines and slots, under one condition."""

    def __init__(self, players: Sequence[object], policy: CallPolicy, lanes: Sequence[Lane],
                 costs: Sequence[float]) -> None:
        n = len(players)
        self.policy = policy
        self.lanes, self.costs = list(lanes), list(costs)
        self.breakers = [breaker_for(p, policy) for p in players]
        self.slots = RUN.slots  # the run's: a call that outlives its run frees a slot of its own run
        self.cond = threading.Condition()
        self.results: list[Union[str, BaseException, None]] = [None] * n
        self.done = [False] * n
        self.remaining = n
        self.cancelled = [False] * n  # read by the worker between attempts: stop retrying
        self.holds_slot = [False] * n
        # the try of call i on the wire, (its ticket in the lane, when it went out); None between tries
        self.tries: list[Optional[tuple[tuple[int, int], float]]] = [None] * n
        self.turn: list[Optional[float]] = [None] * n  # when call i's first turn at the head of its lane came

    def sent(self, i: int, ticket: tuple[int, int], at: float) -> None:
        """A try of call i went out. The caller is not woken: a try's deadline is at least
        call_timeout_s away, and the caller never waits longer than that between looks."""
        self.tries[i] = (ticket, at)

    def ended(self, i: int, turn: Optional[float]) -> Optional[float]:
        """The try of call i came back, its turn having come at ``turn``; when the call's first turn came."""
        self.tries[i] = None
        if self.turn[i] is None:
            self.turn[i] = turn
        return self.turn[i]

    def waiting(self, i: int) -> None:
        """Call i was refused by a rate limit and waits for the pace again: its clock starts anew."""
        self.turn[i] = None

    def settle(self, i: int, result: Union[str, BaseException]) -> bool:
        """Record call i's result unless it is settled already; True if this settled it."""
        with self.cond:
            if self.done[i]:
                return False
            self.results[i], self.done[i] = result, True
            self.remaining -= 1
            if not self.remaining:  # the caller waits for all of them (or a deadline), not each
                self.cond.notify()
            return True

    def release_slot(self, i: int) -> None:
        """Give call i's slot back once: when it ends, or when the caller stops waiting for it."""
        with self.cond:
            held, self.holds_slot[i] = self.holds_slot[i], False
        if held:
            self.slots.release()

    def start(self, i: int, call: Callable[[], str]) -> bool:
        """Call i has a slot: send it and return True, unless its player's breaker refuses."""
        with self.cond:
            self.holds_slot[i] = True  # before admitting: a breaker opening now must free it
        refused = self.breakers[i].admit(self, i)
        if refused is not None:
            with self.cond:
                self.holds_slot[i] = False  # the dispatcher hands this slot on itself
            self.settle(i, SeatCallError(refused))
            return False
        RUN.workers.submit(partial(attempts, call, self.policy, self, i))
        return True

    def finish(self, i: int, result: Union[str, BaseException]) -> None:
        """Call i ended by itself: tell its player's breaker, then settle it and free its slot.

        The breaker first: once settled, the caller may return and send the next calls, which must
        find the breaker told (settled first, a dead endpoint's next wave raced its breaker). A call
        the caller already stopped waiting for is no longer tracked by the breaker: a no-op there."""
        if not self.done[i]:
            self.breakers[i].record(self, i, result)
        self.settle(i, result)
        self.release_slot(i)

    def abandon(self, i: int, error: SeatCallError) -> bool:
        """Stop waiting for call i: it fails with ``error``, stops retrying and frees its slot."""
        self.cancelled[i] = True
        settled = self.settle(i, error)
        self.release_slot(i)
        return settled


def attempts(call: Callable[[], str], policy: CallPolicy, batch: Batch, i: int) -> None:
    """Make call i: wait for its lane's pace, send, and retry as the error asks.

    A rate limit or an overload is waited out and sent again without counting as a try (the
    patience budget bounds it); an error no retry cures stops the run; any other transient error is
    retried with backoff within ``max_attempts`` (a try on a lane that answers others costs less,
    ``LIVE_SHARE``) and the call's deadline.
    """
    jitter: Optional[random.Random] = None  # made on the first retry: seeding one costs more than a call's bookkeeping
    lane, attempt, spent = batch.lanes[i], 0, 0
    since = 0.0  # when this call's previous try ended: answers on the lane after it say the endpoint lives
    lane.patience_s = policy.rate_limit_patience_s
    result: Union[str, BaseException]
    while True:
        ticket = lane.acquire(batch.costs[i], lambda: batch.cancelled[i], policy.call_timeout_s)
        if not ticket:
            result = RunStopped(RUN.stop_reason or "run stopped") if RUN.stopped.is_set() else SeatCallError(
                f"no answer within call_timeout_s={policy.call_timeout_s:g}s: the endpoint answered none of the "
                "calls sent before this one" if ticket is None else "stopped waiting for the rate limit's pace")
            break
        CURRENT.lane = lane
        sent_at = time.monotonic()
        batch.sent(i, ticket, sent_at)
        try:
            result = call()
        except Exception as exc:  # noqa: BLE001 - every failure is recorded, never raised here
            result = exc
        finally:
            CURRENT.lane = None
        answered = not isinstance(result, BaseException)
        turn = lane.end(ticket, time.monotonic() - sent_at, answered, status_of(result) is not None)
        turn = batch.ended(i, turn)
        if answered:
            break
        limited, overloaded = is_rate_limited(result), not answered and is_overloaded(result)
        if limited or overloaded:
            lane.learn(headers_of(result))  # a refusal states the limits too
            if limited:
                lane.refused(*(server_wait_said(result) or (None,)))
            else:
                lane.overloaded(*(server_wait_said(result) or (None, "")), policy.backoff_base_s,
                               policy.backoff_cap_s)
            if lane.waited_too_long(policy.rate_limit_patience_s):
                what, word = ("rate limited", "rate limit") if limited else ("overloaded (503/529)", "overloaded")
                stop_run(f"{what}: no answer from this endpoint for rate_limit_patience_s="
                         f"{policy.rate_limit_patience_s:g}s; wait until it answers again, or raise the patience, "
                         "then resume",
                         word)
                break
            if batch.cancelled[i]:
                break
            batch.waiting(i)
            continue
        stop = fatal(result)
        if stop is not None:
            stop_run(stop[1], stop[0])
            break
        attempt += 1
        live = lane.answered_since(since or sent_at)
        since = time.monotonic()
        spent += 1 if live else LIVE_SHARE
        if spent >= policy.max_attempts * LIVE_SHARE or not is_transient(result) or batch.cancelled[i]:
            break
        if live:  # the endpoint answers others: this call's clock starts anew, as after a rate limit
            batch.waiting(i)
            turn = None
        # the call's clock: from its first turn at the head of the lane, or (a try that failed
        # while calls sent before it were still out) from the endpoint's last word
        now = time.monotonic()
        if jitter is None:
            jitter = random.Random(i)  # jitter only spreads retries in time; it never touches results
        pause = 0.0 if isinstance(result, RetryNow) else policy.backoff(attempt, jitter)
        if now + pause >= (turn if turn is not None else max(sent_at, lane.heard_at)) + policy.call_timeout_s:
            break  # the next try could not finish in time: fail now and free the slot
        if RUN.stopped.wait(pause) or batch.cancelled[i]:
            break
    batch.finish(i, result)


def call_all(
    calls: Sequence[tuple[object, Callable[[], str]]], policy: CallPolicy,
    lanes: Optional[Sequence[Hashable]] = None, costs: Optional[Sequence[float]] = None,
) -> list[Union[str, BaseException]]:
    """Run ``(player, call)`` pairs concurrently under the process-wide cap.

    Each result is the reply or the error; never raises for a failing call. A call past its
    deadline comes back as a ``SeatCallError``, and so does one refused by its player's breaker.
    Returns once every call is settled: none of them is retrying any more.

    ``lanes`` names what shares a rate limit, per call (default: the player); ``costs`` the tokens
    each request reserves against a tokens-per-minute limit (prompt plus ``max_tokens``).
    """
    if not calls:
        return []
    if RUN.stopped.is_set():
        return [RunStopped(RUN.stop_reason or "run stopped") for _ in calls]
    players = [player for player, _ in calls]
    if lanes is None:
        lanes = [("player", id(breaker_for(p, policy))) for p in players]  # the breaker entry keeps p alive
    batch = Batch(players, policy, [lane_for(k) for k in lanes], costs or [0.0] * len(calls))
    # One context copy per call, taken on this thread: the session's own sample id. Each call gets
    # its own copy because a Context cannot be entered by two threads at once.
    batch.slots.enqueue([(batch, i, partial(contextvars.copy_context().run, call))
                         for i, (_, call) in enumerate(calls)])
    timeout_s = policy.call_timeout_s
    try:
        while True:
            with batch.cond:
                if not batch.remaining:
                    break
            # Deadlines move on as the endpoint answers (see ``Lane.due``): looked at now. A call
            # not on the wire yet, held or between tries, is bounded where it waits (``attempts``).
            now = time.monotonic()
            look_again = now + timeout_s  # a try sent from now on is due no sooner
            expired = []
            for i, on_wire in enumerate(list(batch.tries)):
                if on_wire is None or batch.done[i]:
                    continue
                due = batch.lanes[i].due(on_wire[0], on_wire[1], timeout_s)
                if due is None:
                    continue
                if due <= now:
                    expired.append((i, on_wire[0]))
                else:
                    look_again = min(look_again, due)
            if not expired:
                with batch.cond:
                    if batch.remaining:
                        batch.cond.wait(look_again - now)
                continue
            for i, ticket in expired:
                # The worker only finishes the try it is in (it cannot be interrupted), then stops;
                # the next call of the lane has its turn meanwhile.
                batch.lanes[i].forget(ticket)
                error = SeatCallError(f"no answer within call_timeout_s={timeout_s:g}s")
                if batch.abandon(i, error):
                    batch.breakers[i].record(batch, i, error)
    finally:
        batch.slots.drop(batch)
    results = list(batch.results)
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]
