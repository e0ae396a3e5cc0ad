"""The concurrency limit of a lane (``lanes.Lane``): its calls in flight, how many may be, their order.

A lane opens with a few calls in flight (``SLOW_START``), so a run does not open with hundreds of
refused requests. A first answer that states no rate limit opens it to ``OPEN_WIDE``, and from
there the limit follows what the server serves (AIMD on latency, TCP-like): every answer that came
back within ``GROW_TOLERANCE`` times the unloaded latency raises it (by ``SLOW_START_GROWTH`` until
the first cut, by one per round trip after), up to what the dispatcher's ``max_concurrency``
allows; once the smoothed latency passes ``LATENCY_TOLERANCE`` times it, the calls in flight were
queueing in the server, and the limit is cut to what it served (Little's law: in flight x unloaded
latency / latency) plus one queued call so it never idles, by at most half and at most once per
round trip. A server that serves hundreds at once (vLLM) never answers slower for more in flight
and is never cut. Refusals without stated limits halve ``window`` instead; stated limits lift both
(the pace bounds the lane then, ``pace.Pace``).

It also keeps the tries in flight in the order they went out, for the deadline (``due``) that
counts the endpoint's silence. A ``Concurrency`` has no lock of its own: its lane calls it under
the lane's.
"""
from __future__ import annotations

import collections
import math
from typing import Callable, Optional

# Calls in flight a lane sends before its first answer says whether the endpoint states rate limits:
# few, so a paid key's run does not open with a burst of refused requests.
SLOW_START = 8
# Calls in flight once the first answer stated no rate limit, before any answer says what the server
# serves. Wide: a call waiting in a slow server's queue does not time out (its deadline counts the
# endpoint's silence, ``due``), so growing from 8 only cost a fast server round trips. Not the
# whole cap (256): this is what a one-slot server queues before the first cut, and its last call
# waits OPEN_WIDE decode times; 64 keeps that within REQUEST_TIMEOUT_S for decodes up to ~55 s a call.
OPEN_WIDE = 64
# A lane sends fewer once its answers take more than LATENCY_TOLERANCE times the server's unloaded
# latency (plus LATENCY_SLACK_S, so that the jitter of an instant player or a LAN never reads as a
# queue). Not 2: a fast server sharing the machine's cores with the eval answers twice as slowly
# under load without queueing.
LATENCY_TOLERANCE, LATENCY_SLACK_S = 3.0, 0.02
GROW_TOLERANCE = 1.5  # an answer within this many times the unloaded latency did not queue: send more
# Until the first cut, each answer that did not queue adds this many: nine times the calls in flight
# per round trip, so a server that serves hundreds (vLLM) has them within two round trips. Not the
# lane's first answer: it sets the unloaded latency, so it cannot tell a queue (a one-slot server's).
SLOW_START_GROWTH = 8
# Requests sent this close together may reach the server in either order (threads, connections):
# one sent within this of the oldest in flight may be ahead of it in the server's queue (``due``).
REORDER_S = 1.0

Ticket = tuple[int, int]  # a try in flight: (its number in the lane, the calls in flight with it)


class Concurrency:
    """The calls a lane has in flight and may have (see the module)."""

    def __init__(self, on_cut: Callable[[], None]) -> None:
        self.on_cut = on_cut  # told when the limit is cut: the server's pace is known
        self.window = math.inf  # calls in flight allowed; finite only once refusals came with no stated limit
        self.limit = float(SLOW_START)  # calls in flight the server serves, as its latency says; inf once paced
        self.latency_s: Optional[float] = None  # smoothed latency of recent answers
        self.unloaded_s: Optional[float] = None  # the least smoothed latency seen: the server with no queue
        self.cut_at_sent: Optional[int] = None  # requests sent when the limit was last cut (None: never)
        self.cut_time = 0.0  # and when
        self.fastest_s = math.inf  # the quickest answer: about one decode with no queue
        self.answer_times: collections.deque = collections.deque(maxlen=32)
        self.busy_since = 0.0  # when calls last went in flight with none before
        self.heard_at = 0.0  # when the endpoint last said anything (an answer, a refusal, an error status)
        self.in_flight = self.sent = self.answered = 0
        # the tries in flight, number -> when sent, oldest first; since when the oldest has been the oldest,
        # how many answers may still come before it (the calls in flight then: the order requests
        # reach the server is not quite the order they were numbered in), and when its own clock
        # started, once they came (see ``due``)
        self.out: collections.OrderedDict = collections.OrderedDict()
        self.head_since = 0.0
        self.head_ahead = 0
        self.head_clock: Optional[float] = None

    def given_up(self) -> int:
        """Tries in flight the caller stopped waiting for (past their deadline): they still count in
        ``in_flight``, the endpoint may still be on them, until they return."""
        return self.in_flight - len(self.out)

    def allowed(self) -> float:
        """How many calls may be in flight now."""
        return min(self.window, self.limit)

    def silent_s(self, now: float) -> float:
        """How long the calls in flight have gone without a word from the endpoint."""
        return now - max(self.busy_since, self.heard_at)

    def send(self, now: float) -> Ticket:
        """A try goes out now: its ticket."""
        if not self.in_flight:
            self.busy_since = now
        self.in_flight += 1
        self.sent += 1
        self.out[self.sent] = now
        if len(self.out) == 1:
            self._new_head(now)
        elif now - next(iter(self.out.values())) < REORDER_S:  # it may overtake the oldest
            self.head_ahead += 1
            self.head_clock = None
        return self.sent, self.in_flight

    def end(self, ticket: Optional[Ticket], now: float, latency_s: Optional[float], answered: bool,
            heard: bool) -> Optional[float]:
        """Try ``ticket`` ended (see ``lanes.Lane.end``); when its own clock started (None: it had none)."""
        self.in_flight -= 1
        if answered:  # before the next try becomes the oldest: this answer was not ahead of it
            self.answer(now, latency_s, ticket)
        elif heard:
            self.heard_at = now
        return self.leave(ticket, now)

    def answer(self, now: float, latency_s: Optional[float], ticket: Optional[Ticket]) -> None:
        self.answered += 1
        if self.answered == 1 and self.limit < OPEN_WIDE:  # it stated no limit (``unbounded`` came first): open
            self.limit = float(OPEN_WIDE)
        if self.head_clock is None:
            self.head_ahead -= 1
            if self.head_ahead <= 0:
                self.head_clock = now  # every call that could be ahead of the oldest was answered
        self.heard_at = now
        if self.window < math.inf:
            self.window += 1 / self.window  # additive increase after a cut
        self.answer_times.append(now)
        if latency_s is not None and ticket is not None and self.limit < math.inf:
            self.fastest_s = min(self.fastest_s, latency_s)
            self._follow_latency(latency_s, *ticket, now)

    def halve(self) -> None:
        """A new burst of refusals on a lane that states no limit: halve the calls in flight."""
        self.window = max(1.0, (self.in_flight if self.window == math.inf else self.window) / 2)

    def unbounded(self) -> None:
        """The server stated its limits: the pace bounds this lane now, not a guess at its concurrency."""
        self.window = self.limit = math.inf

    def leave(self, ticket: Optional[Ticket], now: float) -> Optional[float]:
        """Take try ``ticket`` out of the order; when its own clock started, if it did. Also for a try
        the caller stopped waiting for: the next one has its turn, while this one still counts in
        flight until it returns (the server may still be decoding it)."""
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
        """The oldest try in flight changed."""
        self.head_since = now
        self.head_ahead = self.in_flight - 1  # the tries given up on included: the server may still be on them
        self.head_clock = now if self.head_ahead <= 0 else None

    def due(self, ticket: Ticket, sent_at: float, timeout_s: float) -> Optional[float]:
        """When try ``ticket``, sent at ``sent_at``, is past its deadline; None if it has ended.

        The deadline counts the endpoint's silence, not the time in a server's queue: ``timeout_s``
        with no word from the endpoint on any call of the lane, or, for the oldest try in flight
        (every call sent before it has ended), ``timeout_s`` from the moment the server had
        answered as many calls as were in flight when it became the oldest: whatever could be
        ahead of it in the server's queue was served, its turn has come. A healthy server working
        through a long queue answers the calls ahead, so none behind them times out; a server that
        hangs on one call while answering others still lets that call's turn run out."""
        if ticket[0] not in self.out:
            return None
        silent = max(sent_at, self.heard_at) + timeout_s
        if self.head_clock is not None and next(iter(self.out)) == ticket[0]:
            return min(silent, max(self.head_clock, sent_at) + timeout_s)
        return silent

    def served(self) -> Optional[tuple[float, float]]:
        """(calls the server decodes at once, calls it answers a second), from its recent answers:
        by Little's law, the answers a second times the time one takes with no queue."""
        times = list(self.answer_times)
        if len(times) < 2 or times[-1] <= times[0] or self.fastest_s == math.inf:
            return None
        per_s = (len(times) - 1) / (times[-1] - times[0])
        return max(1.0, per_s * self.fastest_s), per_s

    def _follow_latency(self, latency_s: float, number: int, in_flight: int, now: float) -> None:
        """The concurrency limit's step (see the module)."""
        smooth = latency_s if self.latency_s is None else self.latency_s + 0.25 * (latency_s - self.latency_s)
        self.latency_s = smooth
        # the unloaded latency: the least smoothed latency, drifting up slowly so that longer
        # prompts later in a run (history) are not taken for a queue for ever; not on answers to
        # calls sent past today's limit (the opening burst's), whose latency is the queue that was cut
        drift = 0.002 if in_flight <= self.limit else 0.0
        base = self.unloaded_s = smooth if self.unloaded_s is None else min(
            smooth, self.unloaded_s + drift * (smooth - self.unloaded_s))
        if smooth > LATENCY_TOLERANCE * base + LATENCY_SLACK_S:  # queueing
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
                self.on_cut()
        elif self.answered > 1 and latency_s <= GROW_TOLERANCE * base + LATENCY_SLACK_S and in_flight >= self.limit / 2:
            # grow on an answer that did not queue (not on the smoothed latency: that lags behind a
            # queue building up), and only a limit in use
            self.limit += SLOW_START_GROWTH if self.cut_at_sent is None else 1 / self.limit
