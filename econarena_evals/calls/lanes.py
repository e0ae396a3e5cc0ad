"""Pacing: one lane per (endpoint, key, model), shared by every session of the process.

A lane paces requests and tokens to the limits the server states (``limits.stated_limits``: the
``x-ratelimit-*`` and ``anthropic-ratelimit-*`` headers), backs off when refused, waits when the
server says, and keeps in flight what a server that states no limit serves (its concurrency limit).
The deadline of a call on the wire counts the endpoint's silence on the lane (``Lane.due``).
The lanes of a run belong to the run state (``state.RUN.lanes``).
"""
from __future__ import annotations

import collections
import math
import random
import sys
import threading
import time
from typing import Any, Callable, Hashable, Mapping, Optional

from .limits import stated_limits
from .policy import CallPolicy
from .state import RUN

# Pace at this share of a limit the server states: its buckets refill continuously, ours must not
# run into them from a slightly different clock or token count.
PACE_SHARE = 0.9
BURST_S = 0.5  # how far ahead of the steady pace a lane may send (the real API allows ~1 s)
# Calls in flight a lane sends before its first answer says whether the endpoint states rate limits:
# few, so a paid key's run does not open with a burst of refused requests.
SLOW_START = 8
# Calls in flight once the first answer stated no rate limit, before any answer says what the server
# serves. Wide: a call waiting in a slow server's queue does not time out (its deadline counts the
# endpoint's silence, ``Lane.due``), so growing from 8 only cost a fast server round trips. Not the
# whole cap (256): this is what a one-slot server queues before the first cut, and its last call
# waits OPEN_WIDE decode times; 64 keeps that within REQUEST_TIMEOUT_S for decodes up to ~55 s a call.
OPEN_WIDE = 64
# The concurrency limit (AIMD on latency, see Lane): a lane sends fewer once its answers take more
# than LATENCY_TOLERANCE times the server's unloaded latency (plus LATENCY_SLACK_S, so that the
# jitter of an instant player or a LAN never reads as a queue). Not 2: a fast server sharing the
# machine's cores with the eval answers twice as slowly under load without queueing.
LATENCY_TOLERANCE, LATENCY_SLACK_S = 3.0, 0.02
GROW_TOLERANCE = 1.5  # an answer within this many times the unloaded latency did not queue: send more
# Until the first cut, each answer that did not queue adds this many: nine times the calls in flight
# per round trip, so a server that serves hundreds (vLLM) has them within two round trips. Not the
# lane's first answer: it sets the unloaded latency, so it cannot tell a queue (a one-slot server's).
SLOW_START_GROWTH = 8
# The longest a lane pauses at once for a server's word (retry-after, x-ratelimit-reset-*): a
# header asking for a day must not stall a run. Minute limits reset within 60 s; a longer wait is
# cut to this (and to rate_limit_patience_s), the request is sent again, and a refusal after the
# patience stops the run.
MAX_SERVER_WAIT_S = 60.0
# Requests sent this close together may reach the server in either order (threads, connections):
# one sent within this of the oldest in flight may be ahead of it in the server's queue (``Lane.due``).
REORDER_S = 1.0
# The HTTP timeout of the eval's own requests (evals' OpenAI fns, econarena/chat): the eval's
# deadline (``Lane.due``) ends a call the endpoint stopped answering, so the client's timeout only
class Lane:
    """Everything that shares a rate limit: paces requests and tokens, learns the limits from the
    headers (``x-ratelimit-limit-*``, ``anthropic-ratelimit-*-limit``), backs off when refused, and
    waits when the server says.

    A lane opens with a few calls in flight (``SLOW_START``), so a run does not open with hundreds
    of refused requests. The first answer or refusal that states the key's limits sets the pace, and
    then the pace alone bounds the lane. A first answer that states none opens it to ``OPEN_WIDE``,
    and from there the endpoint gets a concurrency limit that follows what it serves (``limit``:
    AIMD on latency, TCP-like): every answer that came back within
    ``GROW_TOLERANCE`` times the unloaded latency raises the limit (by ``SLOW_START_GROWTH`` until
    the first cut, by one per round trip after), up to what the dispatcher's ``max_concurrency``
    allows; once the smoothed latency passes ``LATENCY_TOLERANCE`` times it, the calls in flight
    were queueing in the server, and the limit is cut to what it served (Little's law: in flight x
    unloaded latency / latency) plus one queued call so it never idles, by at most half and at most
    once per round trip. A server that
    serves hundreds at once (vLLM) never answers slower for more in flight and is never cut.
    Refusals without stated limits halve ``window`` instead.
    """

    def __init__(self, key: Hashable) -> None:
        self.key = key
        self.cond = threading.Condition()
        self.rpm: Optional[float] = None
        self.tpm: Optional[float] = None
        self.share = PACE_SHARE  # lowered on each refusal, raised slowly by answers
        self.tat_requests = self.tat_tokens = 0.0  # theoretical arrival times (GCRA)
        self.paused_until = 0.0
        self.window = math.inf  # calls in flight allowed; finite only once refusals came with no stated limit
        self.limit = float(SLOW_START)  # calls in flight the server serves, as its latency says; inf once paced
        self.latency_s: Optional[float] = None  # smoothed latency of recent answers
        self.unloaded_s: Optional[float] = None  # the least smoothed latency seen: the server with no queue
        self.cut_at_sent: Optional[int] = None  # requests sent when the limit was last cut (None: never)
        self.cut_time = 0.0  # and when
        self.fastest_s = math.inf  # the quickest answer: about one decode with no queue
        self.answer_times: collections.deque = collections.deque(maxlen=32)
        self.busy_since = 0.0  # when calls last went in flight with none before
        # the tries in flight, number -> when sent, oldest first; since when the oldest has been the oldest,
        # how many answers may still come before it (the calls in flight then: the order requests
        # reach the server is not quite the order they were numbered in), and when its own clock
        # started, once they came (see ``due``)
        self.out: collections.OrderedDict = collections.OrderedDict()
        self.head_since = 0.0
        self.head_ahead = 0
        self.head_clock: Optional[float] = None
        self.waiters = 0  # calls waiting in ``acquire``: a freed place wakes one of them, not all
        self.refusals = 0
        self.heard_at = 0.0  # when the endpoint last said anything (an answer, a refusal, an error status)
        self.in_flight = 0
        self.answered = 0
        self.last_answer = time.monotonic()
        self.last_cut = 0.0
        self.rpm_known_at: Optional[float] = None  # when the limits were first stated
        self.sent = 0  # requests and tokens sent so far
        self.sent_tokens = 0.0
        self.patience_s = CallPolicy.rate_limit_patience_s  # of the calls using the lane (set by them)
        self.told_capped = False  # a capped wait is said once per lane, not once per request
        # pauses for an overloaded endpoint since its last answer; while any, the lane sends one
        # call at a time (a probe), so a storm costs a request a pause, not one per call in flight
        self.overloads = 0
        self.told_overloaded = False
        self._jitter = random.Random(repr(key))  # spreads probes in time; never touches results

    def wake(self) -> None:
        with self.cond:
            self.cond.notify_all()

    def acquire(self, cost: float, cancelled: Callable[[], bool], silence_s: float = math.inf) -> Any:
        """Wait until a request of ``cost`` tokens may go out: then (its number in the lane, the
        calls in flight with it). False if the run stopped or the call was cancelled meanwhile;
        None if the lane's calls in flight have gone ``silence_s`` without a word from the
        endpoint (it stopped answering: this call would only queue behind them). Nothing is then
        reserved."""
        with self.cond:
            while True:
                if RUN.stopped.is_set() or cancelled():
                    self._pass_on()
                    return False
                now = time.monotonic()
                window = 1.0 if self.overloads else min(self.window, self.limit)
                wait = self.paused_until - now
                if wait <= 0 and self.in_flight >= window:
                    if now - max(self.busy_since, self.heard_at) >= silence_s:
                        self._pass_on()
                        return None
                    wait = 1.0  # or a release
                if wait <= 0:
                    send_at = now
                    if self.rpm:
                        interval = 60.0 / (self.rpm * self.share)
                        send_at = max(send_at, self.tat_requests - BURST_S)
                    if self.tpm:
                        send_at = max(send_at, self.tat_tokens - BURST_S)
                    wait = send_at - now
                    if wait <= 0:
                        if self.rpm:
                            self.tat_requests = max(self.tat_requests, now) + interval
                        if self.tpm:
                            self.tat_tokens = max(self.tat_tokens, now) + 60.0 * cost / (self.tpm * self.share)
                        if not self.in_flight:
                            self.busy_since = now
                        self.in_flight += 1
                        self.sent += 1
                        self.sent_tokens += cost
                        self.out[self.sent] = now
                        if len(self.out) == 1:
                            self._new_head(now)
                        elif now - next(iter(self.out.values())) < REORDER_S:  # it may overtake the oldest
                            self.head_ahead += 1
                            self.head_clock = None
                        if self.in_flight < window:
                            self._pass_on()  # there is room for the next one too
                        return self.sent, self.in_flight
                self.waiters += 1
                self.cond.wait(min(max(wait, 0.001), 1.0))
                self.waiters -= 1

    def _pass_on(self) -> None:
        """Wake one waiting call (under ``self.cond``): it takes the place, or passes the wake-up on.
        Waking every waiter for each freed place cost a context switch per held call per answer."""
        if self.waiters:
            self.cond.notify()

    def release(self, ticket: Optional[tuple[int, int]] = None) -> None:
        """The try ``ticket`` (as ``acquire`` gave it) ended without an answer or a word from the endpoint."""
        self.end(ticket)

    def end(self, ticket: Optional[tuple[int, int]], latency_s: Optional[float] = None, answered: bool = False,
            heard: bool = False) -> Optional[float]:
        """The try ``ticket`` ended: with an answer ``latency_s`` after it went out, or with a word
        from the endpoint (``heard``: a refusal, an error status), or with neither. One lock for all
        of it. Returns when this try's own clock started (``due``; None: it had none)."""
        with self.cond:
            now = time.monotonic()
            self.in_flight -= 1
            if answered:  # before the next try becomes the oldest: this answer was not ahead of it
                self._answered(now, latency_s, ticket)
            elif heard:
                self.heard_at = now
            turn = self._leave(ticket, now)
            self._pass_on()
            return turn

    def _leave(self, ticket: Optional[tuple[int, int]], now: float) -> Optional[float]:
        """Take try ``ticket`` out of the order (under ``self.cond``); when its own clock started, if it did."""
        if ticket is None or ticket[0] not in self.out:
            return None
        head = next(iter(self.out)) == ticket[0]
        del self.out[ticket[0]]
        if not head:
            return None
        turn = self.head_clock
        if self.out:
            self._new_head(now)
        return turn

    def _new_head(self, now: float) -> None:
        """The oldest try in flight changed (under ``self.cond``)."""
        self.head_since = now
        self.head_ahead = self.in_flight - 1  # the tries given up on included: the server may still be on them
        self.head_clock = now if self.head_ahead <= 0 else None

    def forget(self, ticket: tuple[int, int]) -> None:
        """The caller stopped waiting for try ``ticket``: the next one has its turn. The try still
        counts in flight until it returns (the server may still be decoding it)."""
        with self.cond:
            self._leave(ticket, time.monotonic())

    def due(self, ticket: tuple[int, int], sent_at: float, timeout_s: float) -> Optional[float]:
        """When try ``ticket``, sent at ``sent_at``, is past its deadline; None if it has ended.

        The deadline counts the endpoint's silence, not the time in a server's queue: ``timeout_s``
        with no word from the endpoint on any call of the lane, or, for the oldest try in flight
        (every call sent before it has ended), ``timeout_s`` from the moment the server had
        answered as many calls as were in flight when it became the oldest: whatever could be
        ahead of it in the server's queue was served, its turn has come. A healthy server working
        through a long queue answers the calls ahead, so none behind them times out; a server that
        hangs on one call while answering others still lets that call's turn run out."""
        with self.cond:
            if ticket[0] not in self.out:
                return None
            silent = max(sent_at, self.heard_at) + timeout_s
            if self.head_clock is not None and next(iter(self.out)) == ticket[0]:
                return min(silent, max(self.head_clock, sent_at) + timeout_s)
            return silent

    def learn(self, headers: Mapping[str, str]) -> None:
        """Read the limits an answer states (``limits.stated_limits``: OpenAI's or Anthropic's headers)."""
        stated = stated_limits(headers)
        if stated is None:
            return
        rpm, tpm, used_up = stated
        now = time.monotonic()
        with self.cond:
            first = self.rpm_known_at is None
            self.rpm, self.tpm = rpm or self.rpm, tpm or self.tpm
            self.window = self.limit = math.inf  # the pace bounds this lane now, not a guess at its concurrency
            if first:
                # What went out before the limits were known (the slow start) has already used the
                # key's allowance: the pace starts behind it, not at a full bucket.
                self.rpm_known_at = now
                if self.rpm:
                    self.tat_requests = now + self.sent * 60.0 / (self.rpm * self.share)
                if self.tpm:
                    self.tat_tokens = now + self.sent_tokens * 60.0 / (self.tpm * self.share)
            for reset_s, source in used_up:  # an exhausted allowance: wait for its reset
                self.paused_until = max(self.paused_until, now + self._bounded(reset_s, source))
            RUN.limits[self.key] = (self.rpm, self.tpm)
            self.cond.notify_all()

    def answered_ok(self, latency_s: Optional[float] = None, ticket: Optional[tuple[int, int]] = None) -> None:
        """An answer, ``latency_s`` after request ``ticket`` (as ``acquire`` gave it) went out."""
        with self.cond:
            self._answered(time.monotonic(), latency_s, ticket)
            self._pass_on()

    def _answered(self, now: float, latency_s: Optional[float], ticket: Optional[tuple[int, int]]) -> None:
        self.answered += 1
        self.overloads = 0
        if self.answered == 1 and self.limit < OPEN_WIDE:  # it stated no limit (``learn`` came first): open
            self.limit = float(OPEN_WIDE)
        if self.head_clock is None:
            self.head_ahead -= 1
            if self.head_ahead <= 0:
                self.head_clock = now  # every call that could be ahead of the oldest was answered
        self.last_answer = self.heard_at = now
        if self.window < math.inf:
            self.window += 1 / self.window  # additive increase after a cut
        self.share = min(PACE_SHARE, self.share + 0.005)
        self.answer_times.append(now)
        if latency_s is not None and ticket is not None and self.limit < math.inf:
            self.fastest_s = min(self.fastest_s, latency_s)
            self._follow_latency(latency_s, *ticket)

    def _bounded(self, asked_s: float, source: str) -> float:
        """The pause a server's ``asked_s`` gets: at most ``MAX_SERVER_WAIT_S`` and the patience."""
        bound = min(MAX_SERVER_WAIT_S, self.patience_s)
        if asked_s <= bound:
            return asked_s
        if not self.told_capped:
            self.told_capped = True
            model = f" for {self.key[2]}" if isinstance(self.key, tuple) and len(self.key) == 3 and self.key[2] else ""
            print(f"econarena: rate limit: the endpoint asked{model} for a wait of {asked_s:,.0f} s ({source}); "
                  f"pausing {bound:g} s at most at a time (ceiling {MAX_SERVER_WAIT_S:g} s, rate_limit_patience_s="
                  f"{self.patience_s:g}), then asking again", file=sys.stderr, flush=True)
        return bound

    def _follow_latency(self, latency_s: float, number: int, in_flight: int) -> None:
        """The concurrency limit's step (see the class): under ``self.cond``."""
        smooth = latency_s if self.latency_s is None else self.latency_s + 0.25 * (latency_s - self.latency_s)
        self.latency_s = smooth
        # the unloaded latency: the least smoothed latency, drifting up slowly so that longer
        # prompts later in a run (history) are not taken for a queue for ever; not on answers to
        # calls sent past today's limit (the opening burst's), whose latency is the queue that was cut
        drift = 0.002 if in_flight <= self.limit else 0.0
        base = self.unloaded_s = smooth if self.unloaded_s is None else min(
            smooth, self.unloaded_s + drift * (smooth - self.unloaded_s))
        queueing = smooth > LATENCY_TOLERANCE * base + LATENCY_SLACK_S
        now = time.monotonic()
        if queueing:
            # cut once per round trip: answers to requests sent before the last cut tell of a queue
            # already cut for. A round trip is the answer to a request sent after the cut, or
            # LATENCY_TOLERANCE unloaded latencies: a deep queue (the opening burst in a one-slot
            # server) takes many unloaded latencies to drain, and each of its answers tells by
            # Little's law what the server serves, so it need not drain before the next cut
            if self.cut_at_sent is None or number > self.cut_at_sent or now - self.cut_time >= LATENCY_TOLERANCE * base:
                served = in_flight * base / max(latency_s, 1e-9)
                # at most halved per round trip: a server slowed by something else than our calls
                # (another client, a long reply) is not taken for one that serves a handful
                self.limit = max(1.0, min(self.limit, max(served + 1, self.limit / 2)))
                self.cut_at_sent, self.cut_time = self.sent, now
                RUN.paces[self.key] = self
        elif self.answered > 1 and latency_s <= GROW_TOLERANCE * base + LATENCY_SLACK_S and in_flight >= self.limit / 2:
            # grow on an answer that did not queue (not on the smoothed latency: that lags behind a
            # queue building up), and only a limit in use
            self.limit += SLOW_START_GROWTH if self.cut_at_sent is None else 1 / self.limit

    def refused(self, wait_s: Optional[float], source: str = "retry-after") -> None:
        """A rate-limit 429: everyone in the lane waits as asked (within bounds), and the lane slows
        down (once per second at most, so one burst of refusals is one cut)."""
        now = time.monotonic()
        with self.cond:
            self.refusals += 1
            wait_s = 1.0 if wait_s is None else self._bounded(wait_s, source)
            self.paused_until = max(self.paused_until, now + wait_s)
            if now - self.last_cut >= 1.0 and self.rpm_known_at is not None and now - self.rpm_known_at > 2.0:
                # our own pace overshot (a different token count, another client on the key): slow down
                self.last_cut = now
                self.share = max(0.3, self.share * 0.9)
            if not (self.rpm or self.tpm) and now - self.last_cut >= 1.0:  # no stated limit: halve the calls in flight
                self.last_cut = now
                self.window = max(1.0, (self.in_flight if self.window == math.inf else self.window) / 2)
            self.cond.notify_all()

    def overloaded(self, wait_s: Optional[float], source: str, base_s: float, cap_s: float) -> None:
        """An overload (503, 529, UNAVAILABLE): too busy for everyone, so the whole lane pauses and
        then probes with one call at a time until an answer comes (``acquire``). The pause is the
        server's word if it gave one, else exponential backoff with jitter over the pauses since
        the last answer, at most ``cap_s`` (the call policy's ``backoff_cap_s``: a probe every 20 s
        costs nothing, and the lane finds the storm over within that); both within ``_bounded`` and
        what is left of the patience. Refusals
        of calls sent before the pause began are the same burst: they do not pause it again."""
        with self.cond:
            now = time.monotonic()
            if now < self.paused_until:
                return
            self.overloads += 1
            if wait_s is None:
                step = min(cap_s, base_s * 2 ** min(self.overloads - 1, 30))
                wait_s, source = step / 2 + self._jitter.uniform(0, step / 2), "backoff"
            wait_s = self._bounded(wait_s, source)
            left = self.last_answer + self.patience_s - now  # the stop comes soon after the patience runs out
            wait_s = min(wait_s, max(left, 0.0) + 0.05)
            self.paused_until = now + wait_s
            if not self.told_overloaded:
                self.told_overloaded = True
                model = f" ({self.key[2]})" if isinstance(self.key, tuple) and len(self.key) == 3 and self.key[2] else ""
                print(f"econarena: the endpoint{model} is overloaded: waiting, one probe at a time, for up to "
                      f"rate_limit_patience_s={self.patience_s:g} s without an answer (overloads are not tries)",
                      file=sys.stderr, flush=True)
            self.cond.notify_all()

    def answered_since(self, since: float) -> bool:
        """Whether the lane answered any call after ``since`` (a monotonic time): the endpoint lives."""
        with self.cond:
            return self.answered > 0 and self.last_answer > since

    def pace(self) -> Optional[tuple[float, float]]:
        """(calls the server decodes at once, calls it answers a second), from its recent answers:
        by Little's law, the answers a second times the time one takes with no queue."""
        with self.cond:
            times = list(self.answer_times)
        if len(times) < 2 or times[-1] <= times[0] or self.fastest_s == math.inf:
            return None
        per_s = (len(times) - 1) / (times[-1] - times[0])
        return max(1.0, per_s * self.fastest_s), per_s

    def waited_too_long(self, patience_s: float) -> bool:
        return time.monotonic() - self.last_answer > patience_s


def lane_for(key: Hashable) -> Lane:
    """The run's lane for ``key``, made at its first call."""
    lanes = RUN.lanes
    lane = lanes.get(key)
    if lane is None:
        with RUN.lock:
            lane = lanes.get(key)
            if lane is None:
                lane = lanes[key] = Lane(key)
    return lane


def concurrency_in_use() -> list[tuple[str, int, float]]:
    """(lane's model, calls in flight, its concurrency limit) of every lane that has sent anything;
    the limit is inf where the lane is not cut (paced by stated limits, or serving all it gets)."""
    lanes = [lane for lane in list(RUN.lanes.values()) if lane.sent]
    return [(str(lane.key[2]) if isinstance(lane.key, tuple) and len(lane.key) == 3 else "",
             lane.in_flight, lane.limit if lane.cut_at_sent is not None else math.inf) for lane in lanes]


CURRENT = threading.local()  # the lane of the call this worker thread is making (set by ``dispatch``)


def observe_response_headers(headers: Mapping[str, str]) -> None:
    """Completion fns that see the HTTP answer call this, so the lane learns the key's limits."""
    lane = getattr(CURRENT, "lane", None)
    if lane is not None and headers is not None:
        lane.learn(headers)
