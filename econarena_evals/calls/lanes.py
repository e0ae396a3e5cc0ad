"""Lanes: one per (endpoint, key, model), shared by every session of the process.

A lane is what shares a rate limit: its pace to the limits the server states and the waits it asks
for (``pace.Pace``) and its concurrency limit with the order of its calls in flight
(``concurrency.Concurrency``), under one lock, where the calls of the lane wait their turn
(``acquire``). The lanes of a run belong to the run's call state (``state.CallState.lanes``).
"""
from __future__ import annotations

import math
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Hashable, Mapping, Optional

from .concurrency import Concurrency, Ticket
from .limits import stated_limits
from .pace import Pace, model_of

if TYPE_CHECKING:  # the call state holds the lanes; this module only reads it
    from .state import CallState


class Lane:
    """A pace and a concurrency limit under one condition, which the calls of the lane wait on."""

    def __init__(self, key: Hashable, call_state: CallState) -> None:
        self.key = key
        self.call_state = call_state  # the run's: its stop ends the waits here, the progress line reads its pace
        self.cond = threading.Condition()
        self.pace = Pace(key, call_state.policy.rate_limit_patience_s, call_state.limits)
        self.concurrency = Concurrency(self._cut)
        self.waiters = 0  # calls waiting in ``acquire``: a freed place wakes one of them, not all

    # what the progress line counts (``state.CallState``)
    sent = property(lambda self: self.concurrency.sent)
    answered = property(lambda self: self.concurrency.answered)
    in_flight = property(lambda self: self.concurrency.in_flight)
    refusals = property(lambda self: self.pace.refusals)

    def _cut(self) -> None:
        self.call_state.served[self.key] = self  # its concurrency limit was cut: the progress line tells its pace

    def wake(self) -> None:
        with self.cond:
            self.cond.notify_all()

    def acquire(self, cost: float, cancelled: Callable[[], bool], silence_s: float = math.inf) -> Any:
        """Wait until a request of ``cost`` tokens may go out: then its ticket (its number in the
        lane, the calls in flight with it). False if the run stopped or the call was cancelled
        meanwhile; None if the lane's calls in flight have gone ``silence_s`` without a word from
        the endpoint (it stopped answering: this call would only queue behind them). Nothing is
        then reserved."""
        pace, flow, stopped = self.pace, self.concurrency, self.call_state.stopped
        with self.cond:
            while True:
                if stopped.is_set() or cancelled():
                    self._pass_on()
                    return False
                now = time.monotonic()
                window = 1.0 if pace.overloads else flow.allowed()  # an overloaded lane sends probes
                wait = pace.paused_until - now
                if wait <= 0 and flow.in_flight >= window:
                    if flow.silent_s(now) >= silence_s:
                        self._pass_on()
                        return None
                    wait = 1.0  # or a release
                if wait <= 0:
                    wait = pace.reserve(now, cost)
                    if wait <= 0:
                        ticket = flow.send(now)
                        if flow.in_flight < window:
                            self._pass_on()  # there is room for the next one too
                        return ticket
                self.waiters += 1
                self.cond.wait(min(max(wait, 0.001), 1.0))
                self.waiters -= 1

    def _pass_on(self) -> None:
        """Wake one waiting call (under ``self.cond``): it takes the place, or passes the wake-up on.
        Waking every waiter for each freed place cost a context switch per held call per answer."""
        if self.waiters:
            self.cond.notify()

    def release(self, ticket: Optional[Ticket] = None) -> None:
        """The try ``ticket`` (as ``acquire`` gave it) ended without an answer or a word from the endpoint."""
        self.end(ticket)

    def end(self, ticket: Optional[Ticket], latency_s: Optional[float] = None, answered: bool = False,
            heard: bool = False) -> Optional[float]:
        """The try ``ticket`` ended: with an answer ``latency_s`` after it went out, or with a word
        from the endpoint (``heard``: a refusal, an error status), or with neither. One lock for all
        of it. Returns when this try's own clock started (``Concurrency.due``; None: it had none)."""
        with self.cond:
            now = time.monotonic()
            if answered:
                self.pace.answered(now)
            turn = self.concurrency.end(ticket, now, latency_s, answered, heard)
            self._pass_on()
            return turn

    def forget(self, ticket: Ticket) -> None:
        """The caller stopped waiting for try ``ticket``: the next one has its turn."""
        with self.cond:
            self.concurrency.leave(ticket, time.monotonic())

    def due(self, ticket: Ticket, sent_at: float, timeout_s: float) -> Optional[float]:
        """When try ``ticket``, sent at ``sent_at``, is past its deadline (``Concurrency.due``)."""
        with self.cond:
            return self.concurrency.due(ticket, sent_at, timeout_s)

    def learn(self, headers: Mapping[str, str]) -> None:
        """Read the limits an answer or refusal states (``limits.stated_limits``)."""
        stated = stated_limits(headers)
        if stated is None:
            return
        now = time.monotonic()
        with self.cond:
            self.pace.learn(stated, self.concurrency.sent, now)
            self.concurrency.unbounded()
            self.cond.notify_all()

    def refused(self, wait_s: Optional[float], source: str = "retry-after") -> None:
        """A rate-limit 429: the lane waits as asked and slows down (``Pace.refused``)."""
        now = time.monotonic()
        with self.cond:
            if self.pace.refused(wait_s, source, now):
                self.concurrency.halve()
            self.cond.notify_all()

    def overloaded(self, wait_s: Optional[float], source: str, base_s: float, cap_s: float) -> None:
        """A 503, 529 or UNAVAILABLE: the lane pauses, then probes (``Pace.overloaded``)."""
        with self.cond:
            if self.pace.overloaded(wait_s, source, base_s, cap_s):
                self.cond.notify_all()

    def answered_since(self, since: float) -> bool:
        """Whether the lane answered any call after ``since`` (a monotonic time): the endpoint lives."""
        with self.cond:
            return self.concurrency.answered > 0 and self.pace.last_answer > since

    def served(self) -> Optional[tuple[float, float]]:
        """(calls the server decodes at once, calls it answers a second): ``Concurrency.served``."""
        with self.cond:
            return self.concurrency.served()


def lane_for(call_state: CallState, key: Hashable) -> Lane:
    """The run's lane for ``key``, made at its first call."""
    lanes = call_state.lanes
    lane = lanes.get(key)
    if lane is None:
        with call_state.lock:
            lane = lanes.get(key)
            if lane is None:
                lane = lanes[key] = Lane(key, call_state)
    return lane


def concurrency_in_use(call_state: CallState) -> list[tuple[str, int, int, float]]:
    """(lane's model, calls in flight that the run waits for, tries in flight it gave up on, the
    calls in flight it allows) of every lane that has sent anything. The limit is a whole number
    (a limit of 2.4 lets a third call out: ``Lane.acquire`` sends while fewer are in flight), inf
    where the lane is neither cut nor halved by refusals (paced by stated limits, or serving all it
    gets). Read under the lane's lock: the counts are of one moment."""
    out = []
    for lane in list(call_state.lanes.values()):
        with lane.cond:
            flow = lane.concurrency
            if flow.sent:
                given_up = flow.given_up()
                limited = flow.cut_at_sent is not None or flow.window < math.inf
                out.append((model_of(lane.key), flow.in_flight - given_up, given_up,
                            float(math.ceil(flow.allowed())) if limited and flow.allowed() < math.inf else math.inf))
    return out


def waits(call_state: CallState) -> list[tuple[str, str, float]]:
    """(lane's model, why, seconds since its last answer) of every lane that waits on its endpoint
    now: overloaded (503/529) until an answer comes, or paused after a refusal (429). For the
    progress line, which would otherwise show a run at 0 calls/min that seems stuck."""
    now = time.monotonic()
    out = []
    for lane in list(call_state.lanes.values()):
        pace = lane.pace
        if pace.overloads:
            out.append((model_of(lane.key), "overloaded (503/529)", now - pace.last_answer))
        elif pace.paused_until > now and pace.last_refused > pace.last_answer:
            out.append((model_of(lane.key), "rate limited (429)", now - pace.last_answer))
    return out
