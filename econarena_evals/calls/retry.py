"""The retry loop: one call of a ``call_all`` tried until it is answered, fails for good, runs out of
time or the run stops (``attempts``), each failure treated as ``errors`` says it means.

A rate limit or an overload is waited out in the lane (``pace.Pace``) and sent again without
counting as a try (the patience bounds it); an error no retry cures stops the run; any other
transient error is retried with backoff within ``max_attempts`` (a try on a lane that answers
others costs less, ``LIVE_SHARE``) and the call's deadline.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from .concurrency import Ticket
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
from .lanes import Lane
from .state import CallState

if TYPE_CHECKING:  # the breaker lives with the groups it acts on, which import this module
    from .dispatch import Breaker

# A try that failed while its lane answered other calls (a flaky endpoint that lives: a gateway's
# share of 500s) costs 1/LIVE_SHARE of a try, so such a call gets LIVE_SHARE times max_attempts
# tries; one that failed with no answer on the lane meanwhile (a dead or always-failing endpoint)
# costs a whole one, as before. Either way a request that always fails ends.
LIVE_SHARE = 4


@dataclass(eq=False)
class Call:
    """One call of a ``call_all`` (``dispatch.CallGroup``): what it runs, through which lane and breaker,
    and where it stands. The group settles it under its condition; its worker tries it. It does not
    point back at its group: a cycle would leave every group to the garbage collector."""
    index: int  # its place there (and the seed of its retries' jitter)
    run: Callable[[], Any]  # one try, in the call's own context copy
    lane: Lane
    cost: float  # the tokens it reserves against a tokens-per-minute limit
    breaker: Breaker
    result: Union[str, BaseException, None] = None
    done: bool = False
    cancelled: bool = False  # read by the worker between tries: stop retrying
    holds_slot: bool = False
    on_wire: Optional[tuple[Ticket, float]] = None  # the try out now: (its ticket in the lane, when it went out)
    turn: Optional[float] = None  # when the call's first turn at the head of its lane came


def attempts(call: Call, call_state: CallState) -> Union[str, BaseException]:
    """Make ``call``: wait for its lane's pace, send, and retry as the error asks; its result. The
    run's call state says how (its policy) and whether the run goes on (its stop)."""
    policy, stopped = call_state.policy, call_state.stopped
    jitter: Optional[random.Random] = None  # made on the first retry: seeding one costs more than a call's bookkeeping
    lane, attempt, spent = call.lane, 0, 0
    since = 0.0  # when this call's previous try ended: answers on the lane after it say the endpoint lives
    result: Union[str, BaseException]
    while True:
        ticket = lane.acquire(call.cost, lambda: call.cancelled, policy.call_timeout_s)
        if not ticket:
            if stopped.is_set():
                return RunStopped(call_state.stop_reason or "run stopped")
            return SeatCallError(
                f"no answer within call_timeout_s={policy.call_timeout_s:g}s: the endpoint answered none of the "
                "calls sent before this one" if ticket is None else "stopped waiting for the rate limit's pace")
        sent_at = time.monotonic()
        call.on_wire = (ticket, sent_at)  # the caller is not woken: the deadline is call_timeout_s away at least
        try:
            result = call.run()
        except Exception as exc:  # noqa: BLE001 - every failure is recorded, never raised here
            result = exc
        answered = not isinstance(result, BaseException)
        # an error status is a word from the endpoint too; an answer needs no look at one
        turn = lane.end(ticket, time.monotonic() - sent_at, answered, not answered and status_of(result) is not None)
        call.on_wire = None
        if call.turn is None:
            call.turn = turn
        turn = call.turn
        if answered:
            return result
        limited, overloaded = is_rate_limited(result), is_overloaded(result)
        if limited or overloaded:
            lane.learn(headers_of(result))  # a refusal states the limits too
            if limited:
                lane.refused(*(server_wait_said(result) or (None,)))
            else:
                lane.overloaded(*(server_wait_said(result) or (None, "")), policy.backoff_base_s,
                                policy.backoff_cap_s)
            if lane.pace.waited_too_long(policy.rate_limit_patience_s):
                what, word = ("rate limited", "rate limit") if limited else ("overloaded (503/529)", "overloaded")
                call_state.stop(f"{what}: no answer from this endpoint for rate_limit_patience_s="
                         f"{policy.rate_limit_patience_s:g}s; wait until it answers again, or raise the patience, "
                         "then resume",
                         word)
                return result
            if call.cancelled:
                return result
            call.turn = None  # it waits for the pace again: its clock starts anew
            continue
        stop = fatal(result)
        if stop is not None:
            call_state.stop(stop[1], stop[0])
            return result
        attempt += 1
        live = lane.answered_since(since or sent_at)
        since = time.monotonic()
        spent += 1 if live else LIVE_SHARE
        if spent >= policy.max_attempts * LIVE_SHARE or not is_transient(result) or call.cancelled:
            return result
        if live:  # the endpoint answers others: this call's clock starts anew, as after a rate limit
            call.turn = turn = None
        # the call's clock: from its first turn at the head of the lane, or (a try that failed
        # while calls sent before it were still out) from the endpoint's last word
        now = time.monotonic()
        if jitter is None:
            jitter = random.Random(call.index)  # jitter only spreads retries in time; it never touches results
        pause = 0.0 if isinstance(result, RetryNow) else policy.backoff(attempt, jitter)
        clock = turn if turn is not None else max(sent_at, lane.concurrency.heard_at)
        if now + pause >= clock + policy.call_timeout_s:
            return result  # the next try could not finish in time: fail now and free the slot
        if stopped.wait(pause) or call.cancelled:
            return result
