"""Pacing to what a server states and asks: one ``Pace`` per lane (``lanes.Lane``).

The first answer or refusal that states the key's limits (``limits.stated_limits``: the
``x-ratelimit-*`` and ``anthropic-ratelimit-*`` headers) sets the pace: requests and tokens go out
at ``PACE_SHARE`` of them with ``BURST_S`` of burst (GCRA), a refusal despite the pace lowers the
share, answers raise it back. A server's wait (``retry-after``, an allowance used up) pauses the
lane within ``MAX_SERVER_WAIT_S`` and the patience; an overload (503, 529) pauses it with backoff
and has it probe one call at a time until an answer comes.

A ``Pace`` has no lock of its own: its lane calls it under the lane's.
"""
from __future__ import annotations

import math
import random
import sys
import time
from typing import Hashable, MutableMapping, Optional

from .limits import Stated

# Pace at this share of a limit the server states: its buckets refill continuously, ours must not
# run into them from a slightly different clock or token count.
PACE_SHARE = 0.9
BURST_S = 0.5  # how far ahead of the steady pace a lane may send (the real API allows ~1 s)
# The longest a lane pauses at once for a server's word (retry-after, x-ratelimit-reset-*): a
# header asking for a day must not stall a run. Minute limits reset within 60 s; a longer wait is
# cut to this (and to rate_limit_patience_s), the request is sent again, and a refusal after the
# patience stops the run.
MAX_SERVER_WAIT_S = 60.0
# The longest pause between two probes of an overloaded endpoint that asked for no wait of its own.
# A probe is one request, so probing every 2 s costs an overloaded endpoint 30 requests a minute,
# while the lane finds the overload over within 2 s of its end: an overload costs about its own
# length. (Backing off to backoff_cap_s, 20 s, lost whole open windows of an endpoint overloaded
# 12 s of every 20: 4 sessions took minutes, not the 30 s the overloads and the calls add up to.)
PROBE_EVERY_S = 2.0


def model_of(key: Hashable) -> str:
    """The model of a lane's key (endpoint, key, model); "" for a lane of its own (a player's)."""
    return str(key[2]) if isinstance(key, tuple) and len(key) == 3 and key[2] else ""


class Pace:
    """What the server states and asks of one lane: its limits, its waits, its patience."""

    def __init__(self, key: Hashable, patience_s: float,
                 limits: MutableMapping[Hashable, tuple[Optional[float], Optional[float]]]) -> None:
        self.key = key
        self.limits = limits  # the run's account of the limits its lanes learned (``state.CallState.limits``)
        self.rpm: Optional[float] = None
        self.tpm: Optional[float] = None
        self.share = PACE_SHARE  # lowered on each refusal, raised slowly by answers
        self.tat_requests = self.tat_tokens = 0.0  # theoretical arrival times (GCRA)
        self.paused_until = 0.0
        self.known_at: Optional[float] = None  # when the limits were first stated
        self.sent_tokens = 0.0
        self.refusals = 0
        self.last_refused = -math.inf  # the progress line says a wait for the rate limit until an answer
        self.last_cut = 0.0
        self.last_answer = time.monotonic()
        self.patience_s = patience_s  # the run's rate_limit_patience_s
        self.told_capped = False  # a capped wait is said once per lane, not once per request
        # pauses for an overloaded endpoint since its last answer; while any, the lane sends one
        # call at a time (a probe), so a storm costs a request a pause, not one per call in flight
        self.overloads = 0
        self.told_overloaded = False
        self._jitter = random.Random(repr(key))  # spreads probes in time; never touches results

    def reserve(self, now: float, cost: float) -> float:
        """How long until a request of ``cost`` tokens may go out; at 0 or less it is reserved now."""
        send_at = now
        if self.rpm:
            send_at = max(send_at, self.tat_requests - BURST_S)
        if self.tpm:
            send_at = max(send_at, self.tat_tokens - BURST_S)
        wait = send_at - now
        if wait <= 0:
            if self.rpm:
                self.tat_requests = max(self.tat_requests, now) + 60.0 / (self.rpm * self.share)
            if self.tpm:
                self.tat_tokens = max(self.tat_tokens, now) + 60.0 * cost / (self.tpm * self.share)
            self.sent_tokens += cost
        return wait

    def learn(self, stated: Stated, sent: int, now: float) -> None:
        """Limits an answer or refusal stated, ``sent`` requests after the lane opened."""
        rpm, tpm, used_up = stated
        first = self.known_at is None
        self.rpm, self.tpm = rpm or self.rpm, tpm or self.tpm
        if first:
            # What went out before the limits were known (the slow start) has already used the
            # key's allowance: the pace starts behind it, not at a full bucket.
            self.known_at = now
            if self.rpm:
                self.tat_requests = now + sent * 60.0 / (self.rpm * self.share)
            if self.tpm:
                self.tat_tokens = now + self.sent_tokens * 60.0 / (self.tpm * self.share)
        for reset_s, source in used_up:  # an exhausted allowance: wait for its reset
            self.paused_until = max(self.paused_until, now + self._bounded(reset_s, source))
        self.limits[self.key] = (self.rpm, self.tpm)

    def answered(self, now: float) -> None:
        self.overloads = 0
        self.last_answer = now
        self.share = min(PACE_SHARE, self.share + 0.005)

    def refused(self, wait_s: Optional[float], source: str, now: float) -> bool:
        """A rate-limit 429: everyone in the lane waits as asked (within bounds), and the pace slows
        (once per second at most, so one burst of refusals is one cut). True if the lane states no
        limit and the refusal is a new burst: its concurrency is then to be halved."""
        self.refusals += 1
        self.last_refused = now
        wait_s = 1.0 if wait_s is None else self._bounded(wait_s, source)
        self.paused_until = max(self.paused_until, now + wait_s)
        if now - self.last_cut >= 1.0 and self.known_at is not None and now - self.known_at > 2.0:
            # our own pace overshot (a different token count, another client on the key): slow down
            self.last_cut = now
            self.share = max(0.3, self.share * 0.9)
        if not (self.rpm or self.tpm) and now - self.last_cut >= 1.0:
            self.last_cut = now
            return True
        return False

    def overloaded(self, wait_s: Optional[float], source: str, base_s: float, cap_s: float) -> bool:
        """An overload (503, 529, UNAVAILABLE): too busy for everyone, so the whole lane pauses and
        then probes with one call at a time until an answer comes. The pause is the server's word if
        it gave one, else exponential backoff with jitter over the pauses since the last answer, at
        most ``cap_s`` (the call policy's ``backoff_cap_s``) and ``PROBE_EVERY_S`` (so the lane
        finds the overload over within seconds of its end); both within ``_bounded`` and what is
        left of the patience. Refusals of calls sent before the pause began are the same burst: they do not
        pause it again (False)."""
        now = time.monotonic()
        if now < self.paused_until:
            return False
        self.overloads += 1
        if wait_s is None:
            step = min(cap_s, PROBE_EVERY_S, base_s * 2 ** min(self.overloads - 1, 30))
            wait_s, source = step / 2 + self._jitter.uniform(0, step / 2), "backoff"
        wait_s = self._bounded(wait_s, source)
        left = self.last_answer + self.patience_s - now  # the stop comes soon after the patience runs out
        self.paused_until = now + min(wait_s, max(left, 0.0) + 0.05)
        if not self.told_overloaded:
            self.told_overloaded = True
            model = model_of(self.key)
            print(f"econarena: the endpoint{f' ({model})' if model else ''} is overloaded: waiting, one probe at a "
                  f"time, for up to rate_limit_patience_s={self.patience_s:g} s without an answer (overloads are "
                  "not tries)", file=sys.stderr, flush=True)
        return True

    def waited_too_long(self, patience_s: float) -> bool:
        return time.monotonic() - self.last_answer > patience_s

    def _bounded(self, asked_s: float, source: str) -> float:
        """The pause a server's ``asked_s`` gets: at most ``MAX_SERVER_WAIT_S`` and the patience."""
        bound = min(MAX_SERVER_WAIT_S, self.patience_s)
        if asked_s <= bound:
            return asked_s
        if not self.told_capped:
            self.told_capped = True
            model = model_of(self.key)
            print(f"econarena: rate limit: the endpoint asked{f' for {model}' if model else ''} for a wait of "
                  f"{asked_s:,.0f} s ({source}); pausing {bound:g} s at most at a time (ceiling "
                  f"{MAX_SERVER_WAIT_S:g} s, rate_limit_patience_s={self.patience_s:g}), then asking again",
                  file=sys.stderr, flush=True)
        return bound
