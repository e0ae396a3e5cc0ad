"""Seat calls: concurrent, capped, retried with backoff, and bounded by a deadline at any load.

This is the only module that deals with threads. Every seat call of every session goes through
one process-wide dispatcher:

* A call that waits for a slot of the cap (``max_concurrency``) waits in a FIFO queue and holds
  nothing: no slot, no thread. Slots are handed out in order as calls end, so the wait is bounded
  by the calls ahead of it, each of which is bounded in turn.
* A call's deadline (``call_timeout_s``) counts the endpoint's silence, not the time the call waits
  in a server's queue (``Lane.due``). The caller stops waiting for it at the deadline, gives its
  slot back at once and tells the call to stop retrying.
* Retries are ours: at most ``max_attempts`` tries per call (``endpoints`` runs evals' own
  OpenAI fns, which would otherwise retry forever, one try at a time under this policy).
* A breaker per player: after ``breaker_threshold`` endpoint failures in a row its endpoint is
  taken for down, and its calls (waiting or queued) fail at once.

A call runs on a reused daemon worker, in a copy of the context of the thread that called
``call_all``, taken there and then: evals' ``record_sampling`` inside a completion fn finds the sample
id of the session the call belongs to. (Copied when a slot is handed out instead, on whichever
thread freed that slot, it would carry the sample id of the session that thread last served.)
"""
from __future__ import annotations

import collections
import contextvars
import json
import math
import queue
import random
import re
import sys
import threading
import time
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Hashable, Mapping, Optional, Sequence, Union

from ..core.redact import redact_text


class RetryNow(RuntimeError):
    """Raised by a completion fn that changed how it asks (a model that refused an argument) and
    wants one more try at once; it counts as a try, and says nothing about the endpoint."""


class NotACompletion(RuntimeError):
    """An answer that is no completion: an HTTP 200 with no ``choices`` or a choice without its
    ``message`` (a broken endpoint or gateway), or a completion fn that returned no completions.
    The endpoint's fault, never the model's rule break: retried like a 5xx, counted by the breaker.
    (A message whose ``content`` is null is the model's answer, and a rule break.)"""


class RunStopped(RuntimeError):
    """The run was stopped (an error no retry cures, or the rate-limit patience ran out): no more
    requests go out, and every call still waiting fails with this."""


def _status(exc: BaseException) -> Optional[int]:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _error_body(exc: BaseException) -> dict[str, Any]:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        return inner if isinstance(inner, dict) else {}
    return {}


def _headers(exc: BaseException) -> Mapping[str, str]:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    return headers if headers is not None else {}


_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$")
_TRY_AGAIN = re.compile(r"try again in (\d+(?:\.\d+)?)\s*(ms|s|seconds?|m|minutes?)\b", re.I)


def parse_duration(text: Any) -> Optional[float]:
    """Seconds in the forms the API uses: "1s", "6m0s", "250ms", "1h2m3.5s", or a bare number of seconds."""
    text = str(text or "").strip()
    if not text:
        return None
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    m = _DURATION.match(text)
    if not m or not any(m.groups()):
        return None
    h, mins, sec, ms = (float(g) if g else 0.0 for g in m.groups())
    return h * 3600 + mins * 60 + sec + ms / 1000


def server_wait(exc: BaseException) -> Optional[float]:
    """How long the server asked us to wait before trying again, if it said."""
    said = server_wait_said(exc)
    return None if said is None else said[0]


def server_wait_said(exc: BaseException) -> Optional[tuple[float, str]]:
    """(seconds, where the server said it) of the wait a refusal asks for, if it said."""
    headers = _headers(exc)
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000), "retry-after-ms"
        except ValueError:
            pass
    after = parse_duration(headers.get("retry-after"))
    if after is not None:
        return after, "retry-after"
    said = _TRY_AGAIN.search(str(_error_body(exc).get("message") or exc))
    if said:
        unit = said.group(2).lower()
        return float(said.group(1)) * (0.001 if unit == "ms" else 60 if unit.startswith("m") and unit != "ms" else 1), \
            "the error message"
    resets = [(r, f"x-ratelimit-reset-{k}") for k in ("requests", "tokens")
              if (r := parse_duration(headers.get(f"x-ratelimit-reset-{k}"))) is not None]
    return max(resets) if resets else None


def is_rate_limited(exc: BaseException) -> bool:
    """A 429 that waiting cures: any 429 but a quota (billing) error."""
    return _status(exc) == 429 and fatal_cause(exc) is None


def fatal_cause(exc: BaseException) -> Optional[str]:
    """One line naming an error that no retry cures, and what to do about it; None for any other."""
    fatal = _fatal(exc)
    return None if fatal is None else fatal[1]


def _fatal(exc: BaseException) -> Optional[tuple[str, str]]:
    """(the stop's word in the log and the summary's status, the line for the user), or None."""
    status, body = _status(exc), _error_body(exc)
    code = str(body.get("code") or body.get("type") or "")
    message = str(body.get("message") or exc)[:200]
    if status == 429 and ("insufficient_quota" in code or "quota" in message.lower() and "exceeded your" in message.lower()):
        return "quota", f"the API key's quota is used up (429 {code or 'insufficient_quota'}): add credit or use another key, then resume"
    if status == 401:
        return "key", f"the endpoint refused the API key (401): check OPENAI_API_KEY / api_key, then resume. Server said: {message}"
    if status == 403:
        return "permission", f"the API key may not use this model or endpoint (403): check its permissions, then resume. Server said: {message}"
    if status == 404:
        return "model", f"the endpoint does not know this model or path (404): check the model name and base URL, then resume. Server said: {message}"
    if status == 400 and ("context_length" in code or "maximum context length" in message.lower()):
        return "context", f"a prompt is too long for the model's context (400 {code}): use a model with a longer context, or lower max_tokens"
    return None


def is_transient(exc: BaseException) -> bool:
    """Errors worth another try: rate limits, 5xx, connection trouble, timeouts."""
    if isinstance(exc, (RetryNow, NotACompletion)):
        return True
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a dependency
        openai = None  # type: ignore[assignment]
    if openai is not None and isinstance(
        exc,
        (openai.RateLimitError, openai.APIConnectionError, openai.APITimeoutError, openai.InternalServerError),
    ):
        return True
    if openai is not None and isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    # A truncated or garbled response body is the server's fault, not the request's.
    if openai is not None and isinstance(exc, openai.APIResponseValidationError):
        return True
    return isinstance(exc, (ConnectionError, TimeoutError, json.JSONDecodeError))


def is_endpoint_failure(exc: BaseException) -> bool:
    """Failures that say the endpoint is down or refusing us, which the breaker counts.

    A completion fn's own bug (a TypeError for an unexpected keyword, say) says nothing about the
    endpoint: counting it would report a healthy endpoint as "taken for down".
    """
    if isinstance(exc, RetryNow) or is_rate_limited(exc):
        return False  # a busy endpoint is not a down one
    if isinstance(exc, SeatCallError) or is_transient(exc):
        return True
    try:
        import openai
    except ImportError:  # pragma: no cover
        return False
    return isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError))


class SeatCallError(RuntimeError):
    """A seat call that ran past its deadline, or was refused by its player's breaker."""


@dataclass(frozen=True)
class CallPolicy:
    # calls in flight at once, for the whole process (or $ECONARENA_MAX_CONCURRENCY)
    max_concurrency: int = 256
    call_timeout_s: float = 120.0
    max_attempts: int = 4
    backoff_base_s: float = 1.0
    backoff_cap_s: float = 20.0
    # After this many endpoint failures in a row for one player, with no success in between, its
    # endpoint is taken for down: further calls fail at once (one probe per probe_interval_s
    # may close it again), so a dead endpoint costs one deadline, not one per wave of sessions.
    breaker_threshold: int = 20
    probe_interval_s: float = 30.0
    # How long an endpoint may refuse us with rate limits (429) without a single answer in between
    # before the run stops: waiting is right for a busy endpoint, not forever for a stuck one.
    rate_limit_patience_s: float = 600.0

    def __post_init__(self) -> None:
        if self.max_concurrency < 1 or self.max_attempts < 1 or not self.call_timeout_s > 0:
            raise ValueError("need max_concurrency >= 1, max_attempts >= 1 and call_timeout_s > 0")

    def backoff(self, attempt: int, jitter: random.Random) -> float:
        """Capped exponential backoff with full jitter, for attempt 1, 2, ..."""
        return jitter.uniform(0, min(self.backoff_cap_s, self.backoff_base_s * 2 ** (attempt - 1)))


# ---- stopping the run, and what the run has done so far ----

class _RunState:
    """Process-wide: why the run stopped (if it did), and counters for the progress line."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stop_reason: Optional[str] = None
        self.stop_word: Optional[str] = None  # "quota", "interrupted", ...: the summary's "stopped: <word>"
        self.stopped = threading.Event()
        self._counted_before = (0, 0, 0)  # (sent, refused, answered) by earlier runs in this process
        self.limits: dict[Hashable, tuple[Optional[float], Optional[float]]] = {}  # lane -> (rpm, tpm)
        self.paces: dict[Hashable, "Lane"] = {}  # the lanes whose concurrency limit was cut: a server's pace

    def reset(self) -> None:
        """A new run in this process (an eval run in-process after another): not stopped, counters at 0."""
        with self.lock:
            self.stop_reason = self.stop_word = None
            self.stopped.clear()
            self._counted_before = self._counts()
            self.limits.clear()
            self.paces.clear()

    def stop(self, reason: str, word: str = "stopped") -> None:
        with self.lock:
            if self.stop_reason is None:
                self.stop_reason, self.stop_word = reason, word
        self.stopped.set()
        for lane in list(_lanes.values()):
            lane.wake()

    # The counters for the progress line are the lanes' own, summed when read (once a second):
    # one process-wide lock taken twice per call cost more than the rest of the call's bookkeeping.
    @staticmethod
    def _counts() -> tuple[int, int, int]:
        lanes = list(_lanes.values())
        return (sum(lane.sent for lane in lanes), sum(lane.refusals for lane in lanes),
                sum(lane.answered for lane in lanes))

    @property
    def sent(self) -> int:
        return self._counts()[0] - self._counted_before[0]

    @property
    def refused(self) -> int:
        return self._counts()[1] - self._counted_before[1]

    @property
    def answered(self) -> int:
        return self._counts()[2] - self._counted_before[2]


RUN = _RunState()


def stop_run(reason: str, word: str = "stopped") -> None:
    """No new request goes out from now on; calls waiting or queued fail with ``RunStopped``.
    ``word`` names the cause in one word for the log (``econarena_stop``) and the summary. The
    reason may quote the server (``Server said: no such path /v1/...?key=...``): masked here, once,
    for every place that prints or records it."""
    RUN.stop(redact_text(reason), word)


def wait_in_flight(timeout_s: float) -> int:
    """Wait up to ``timeout_s`` for the requests already sent to end (answered and recorded, or
    failed); returns how many are still out. After a stop, what is in flight is paid for anyway:
    kept in the log, a resume need not pay for it again."""
    deadline = time.monotonic() + timeout_s
    while True:
        out = sum(lane.in_flight for lane in list(_lanes.values()))
        if out <= 0 or time.monotonic() >= deadline:
            return max(0, out)
        time.sleep(0.01)


# ---- pacing: one lane per (endpoint, key, model) ----

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
# has to outlast a healthy server's queue, and frees the thread and socket of a call given up on.
REQUEST_TIMEOUT_S = 3600.0


def request_timeout(call_timeout_s: float) -> float:
    """The HTTP timeout of a request whose call has deadline ``call_timeout_s``."""
    return max(call_timeout_s, REQUEST_TIMEOUT_S)


class Lane:
    """Everything that shares a rate limit: paces requests and tokens, learns the limits from the
    ``x-ratelimit-limit-*`` headers, backs off when refused, and waits when the server says.

    A lane opens with a few calls in flight (``SLOW_START``), so a run does not open with hundreds
    of refused requests. The first answer or refusal that states the key's limits sets the pace, and
    then the pace alone bounds the lane. A first answer that states none opens it to ``OPEN_WIDE``,
    and from there the endpoint gets a concurrency limit that follows what it serves (``limit``: AIMD on latency, TCP-like): every answer that came back within
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
                window = min(self.window, self.limit)
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
        """Read the limits an answer states (``x-ratelimit-limit-requests`` / ``-tokens``)."""
        def number(name: str) -> Optional[float]:
            try:
                value = float(headers.get(name))  # type: ignore[arg-type]
            except (TypeError, ValueError):
                return None
            return value if value > 0 else None

        rpm, tpm = number("x-ratelimit-limit-requests"), number("x-ratelimit-limit-tokens")
        if rpm is None and tpm is None:
            return
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
            for kind in ("requests", "tokens"):  # an exhausted allowance: wait for its reset
                left = headers.get(f"x-ratelimit-remaining-{kind}")
                reset = parse_duration(headers.get(f"x-ratelimit-reset-{kind}"))
                try:
                    if left is not None and float(left) < 1 and reset is not None:
                        self.paused_until = max(self.paused_until, now + self._bounded(
                            reset, f"x-ratelimit-reset-{kind}"))
                except ValueError:
                    pass
            RUN.limits[self.key] = (self.rpm, self.tpm)
            self.cond.notify_all()

    def answered_ok(self, latency_s: Optional[float] = None, ticket: Optional[tuple[int, int]] = None) -> None:
        """An answer, ``latency_s`` after request ``ticket`` (as ``acquire`` gave it) went out."""
        with self.cond:
            self._answered(time.monotonic(), latency_s, ticket)
            self._pass_on()

    def _answered(self, now: float, latency_s: Optional[float], ticket: Optional[tuple[int, int]]) -> None:
        self.answered += 1
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


_lanes: dict[Hashable, Lane] = {}
_lanes_lock = threading.Lock()


def lane_for(key: Hashable) -> Lane:
    with _lanes_lock:
        lane = _lanes.get(key)
        if lane is None:
            lane = _lanes[key] = Lane(key)
        return lane


def concurrency_in_use() -> list[tuple[str, int, float]]:
    """(lane's model, calls in flight, its concurrency limit) of every lane that has sent anything;
    the limit is inf where the lane is not cut (paced by stated limits, or serving all it gets)."""
    with _lanes_lock:
        lanes = [lane for lane in _lanes.values() if lane.sent]
    return [(str(lane.key[2]) if isinstance(lane.key, tuple) and len(lane.key) == 3 else "",
             lane.in_flight, lane.limit if lane.cut_at_sent is not None else math.inf) for lane in lanes]


_current = threading.local()  # the lane of the call this worker thread is making


def observe_response_headers(headers: Mapping[str, str]) -> None:
    """Completion fns that see the HTTP answer call this, so the lane learns the key's limits."""
    lane = getattr(_current, "lane", None)
    if lane is not None and headers is not None:
        lane.learn(headers)


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
        self._last_error = ""
        self._next_probe = 0.0
        self._waiting: set[tuple["_Batch", int]] = set()

    def _why(self) -> str:
        return f"endpoint taken for down after {self._failures} failed calls in a row; last: {self._last_error}"

    def admit(self, batch: "_Batch", i: int) -> Optional[str]:
        """None if call i of the batch may go out (it is then tracked); else why it may not."""
        with self._lock:
            if self._failures >= self.threshold:
                now = time.monotonic()
                if now < self._next_probe:
                    return self._why()
                self._next_probe = now + self.probe_interval_s
            self._waiting.add((batch, i))
            return None

    def record(self, batch: "_Batch", i: int, result: Union[str, BaseException]) -> None:
        ok = not isinstance(result, BaseException)
        with self._lock:
            if (batch, i) not in self._waiting:
                return  # already failed by the breaker opening
            self._waiting.discard((batch, i))
            if ok:
                self._failures = 0
                return
            if not is_endpoint_failure(result):  # type: ignore[arg-type]
                return
            self._failures += 1
            self._last_error = f"{type(result).__name__}: {result}"
            if self._failures != self.threshold:
                return
            self._next_probe = time.monotonic() + self.probe_interval_s
            stranded, self._waiting = self._waiting, set()
            why = self._why()
        for other, j in stranded:
            other.abandon(j, SeatCallError(why))


# id(player) -> (player, breaker). The player is kept alive so that its id cannot be reused by a
# new object that would inherit a stale breaker; players are few and live as long as the process.
_breakers: dict[int, tuple[object, Breaker]] = {}
_breakers_lock = threading.Lock()


def breaker_for(player: object, policy: CallPolicy) -> Breaker:
    with _breakers_lock:
        entry = _breakers.get(id(player))
        if entry is None:
            entry = _breakers[id(player)] = (player, Breaker(policy.breaker_threshold, policy.probe_interval_s))
        return entry[1]


class _Workers:
    """Daemon worker threads, reused from call to call; a new one starts only when none is idle.

    Daemon, because a call we stopped waiting for may not return soon (a custom completion fn may
    block or retry on its own) and must not keep the process alive.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            spawn = self._idle == 0
            if not spawn:
                self._idle -= 1
        self._jobs.put(job)
        if spawn:
            threading.Thread(target=self._work, daemon=True, name="econarena-seat-call").start()

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                job()
            finally:
                with self._lock:
                    self._idle += 1


_workers = _Workers()


class _Dispatcher:
    """The process-wide cap on calls in flight and the FIFO queue of calls waiting for a slot."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: collections.deque = collections.deque()
        self.in_flight = 0

    def enqueue(self, items: Sequence[tuple["_Batch", int, Callable[[], str]]]) -> None:
        with self._lock:
            self._pending.extend(items)
        self.pump()

    def release(self) -> None:
        with self._lock:
            self.in_flight -= 1
        self.pump()

    def pump(self) -> None:
        """Start queued calls while slots are free. The cap is read from each call's own policy.
        Once the run is stopped, every queued call fails at once instead."""
        while True:
            with self._lock:
                stopped = RUN.stopped.is_set()
                if not self._pending or (not stopped and self.in_flight >= self._pending[0][0].policy.max_concurrency):
                    return
                batch, i, call = self._pending.popleft()
                if batch.done[i]:
                    continue
                if not stopped:
                    self.in_flight += 1
            if stopped:
                batch.settle(i, RunStopped(RUN.stop_reason or "run stopped"))
            elif not batch.start(i, call):
                with self._lock:  # refused by its breaker: the slot goes straight to the next call
                    self.in_flight -= 1

    def drop(self, batch: "_Batch") -> None:
        """Forget the queued calls of a batch whose caller has stopped waiting."""
        with self._lock:
            self._pending = collections.deque(item for item in self._pending if item[0] is not batch)


_dispatcher = _Dispatcher()


class _Batch:
    """The calls of one ``call_all``: results, deadlines and slots, under one condition."""

    def __init__(self, players: Sequence[object], policy: CallPolicy, lanes: Sequence[Lane],
                 costs: Sequence[float]) -> None:
        n = len(players)
        self.policy = policy
        self.lanes, self.costs = list(lanes), list(costs)
        self.breakers = [breaker_for(p, policy) for p in players]
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
            _dispatcher.release()

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
        _workers.submit(partial(_attempts, call, self.policy, self, i))
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


def _attempts(call: Callable[[], str], policy: CallPolicy, batch: _Batch, i: int) -> None:
    """Make call i: wait for its lane's pace, send, and retry as the error asks.

    A rate limit is waited out and sent again without counting as a try (the patience budget bounds
    it); an error no retry cures stops the run; any other transient error is retried with backoff
    within ``max_attempts`` and the call's deadline.
    """
    jitter: Optional[random.Random] = None  # made on the first retry: seeding one costs more than a call's bookkeeping
    lane, attempt = batch.lanes[i], 0
    lane.patience_s = policy.rate_limit_patience_s
    result: Union[str, BaseException]
    while True:
        ticket = lane.acquire(batch.costs[i], lambda: batch.cancelled[i], policy.call_timeout_s)
        if not ticket:
            result = RunStopped(RUN.stop_reason or "run stopped") if RUN.stopped.is_set() else SeatCallError(
                f"no answer within call_timeout_s={policy.call_timeout_s:g}s: the endpoint answered none of the "
                "calls sent before this one" if ticket is None else "stopped waiting for the rate limit's pace")
            break
        _current.lane = lane
        sent_at = time.monotonic()
        batch.sent(i, ticket, sent_at)
        try:
            result = call()
        except Exception as exc:  # noqa: BLE001 - every failure is recorded, never raised here
            result = exc
        finally:
            _current.lane = None
        answered = not isinstance(result, BaseException)
        turn = lane.end(ticket, time.monotonic() - sent_at, answered, _status(result) is not None)
        turn = batch.ended(i, turn)
        if answered:
            break
        if is_rate_limited(result):
            lane.learn(_headers(result))  # a refusal states the limits too
            lane.refused(*(server_wait_said(result) or (None,)))
            if lane.waited_too_long(policy.rate_limit_patience_s):
                stop_run(f"rate limited: no answer from this endpoint for rate_limit_patience_s="
                         f"{policy.rate_limit_patience_s:g}s; wait for the limit to reset, or raise the patience, then resume",
                         "rate limit")
                break
            if batch.cancelled[i]:
                break
            batch.waiting(i)
            continue
        fatal = _fatal(result)
        if fatal is not None:
            stop_run(fatal[1], fatal[0])
            break
        attempt += 1
        if attempt >= policy.max_attempts or not is_transient(result) or batch.cancelled[i]:
            break
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
    batch = _Batch(players, policy, [lane_for(k) for k in lanes], costs or [0.0] * len(calls))
    # One context copy per call, taken on this thread: the session's own sample id. Each call gets
    # its own copy because a Context cannot be entered by two threads at once.
    _dispatcher.enqueue([(batch, i, partial(contextvars.copy_context().run, call)) for i, (_, call) in enumerate(calls)])
    timeout_s = policy.call_timeout_s
    try:
        while True:
            with batch.cond:
                if not batch.remaining:
                    break
            # Deadlines move on as the endpoint answers (see ``Lane.due``): looked at now. A call
            # not on the wire yet, held or between tries, is bounded where it waits (``_attempts``).
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
        _dispatcher.drop(batch)
    results = list(batch.results)
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]
