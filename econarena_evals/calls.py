"""Seat calls: concurrent, capped, retried with backoff, and bounded by a deadline at any load.

This is the only module that deals with threads. Every seat call of every session goes through
one process-wide dispatcher:

* A call that waits for a slot of the cap (``max_concurrency``) waits in a FIFO queue and holds
  nothing: no slot, no thread. Slots are handed out in order as calls end, so the wait is bounded
  by the calls ahead of it, each of which is bounded in turn.
* A call's deadline (``call_timeout_s``) runs from the moment it is sent. The caller stops waiting
  for it at the deadline, gives its slot back at once and tells the call to stop retrying.
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
import os
import queue
import random
import threading
import time
from dataclasses import dataclass
from functools import partial
from typing import Callable, Optional, Sequence, Union

DEFAULT_MAX_CONCURRENCY = 256
ENV_MAX_CONCURRENCY = "ECONARENA_MAX_CONCURRENCY"


def resolve_max_concurrency(arg: Optional[int]) -> int:
    """Eval arg first, then $ECONARENA_MAX_CONCURRENCY, then the default."""
    if arg is None:
        env = os.environ.get(ENV_MAX_CONCURRENCY)
        arg = int(env) if env else DEFAULT_MAX_CONCURRENCY
    if int(arg) < 1:
        raise ValueError(f"max_concurrency must be >= 1, got {arg}")
    return int(arg)


def is_transient(exc: BaseException) -> bool:
    """Errors worth another try: rate limits, 5xx, connection trouble, timeouts."""
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
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    call_timeout_s: float = 120.0
    max_attempts: int = 4
    backoff_base_s: float = 1.0
    backoff_cap_s: float = 20.0
    # After this many endpoint failures in a row for one player, with no success in between, its
    # endpoint is taken for down: further calls fail at once (one probe per probe_interval_s
    # may close it again), so a dead endpoint costs one deadline, not one per wave of sessions.
    breaker_threshold: int = 20
    probe_interval_s: float = 30.0

    def __post_init__(self) -> None:
        if self.max_concurrency < 1 or self.max_attempts < 1 or not self.call_timeout_s > 0:
            raise ValueError("need max_concurrency >= 1, max_attempts >= 1 and call_timeout_s > 0")

    def backoff(self, attempt: int, jitter: random.Random) -> float:
        """Capped exponential backoff with full jitter, for attempt 1, 2, ..."""
        return jitter.uniform(0, min(self.backoff_cap_s, self.backoff_base_s * 2 ** (attempt - 1)))


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
        """Start queued calls while slots are free. The cap is read from each call's own policy."""
        while True:
            with self._lock:
                if not self._pending or self.in_flight >= self._pending[0][0].policy.max_concurrency:
                    return
                batch, i, call = self._pending.popleft()
                if batch.done[i]:
                    continue
                self.in_flight += 1
            if not batch.start(i, call):
                with self._lock:  # refused by its breaker: the slot goes straight to the next call
                    self.in_flight -= 1

    def drop(self, batch: "_Batch") -> None:
        """Forget the queued calls of a batch whose caller has stopped waiting."""
        with self._lock:
            self._pending = collections.deque(item for item in self._pending if item[0] is not batch)


_dispatcher = _Dispatcher()


class _Batch:
    """The calls of one ``call_all``: results, deadlines and slots, under one condition."""

    def __init__(self, players: Sequence[object], policy: CallPolicy) -> None:
        n = len(players)
        self.policy = policy
        self.breakers = [breaker_for(p, policy) for p in players]
        self.cond = threading.Condition()
        self.results: list[Union[str, BaseException, None]] = [None] * n
        self.done = [False] * n
        self.remaining = n
        self.cancelled = [False] * n  # read by the worker between attempts: stop retrying
        self.holds_slot = [False] * n
        self.deadline: list[Optional[float]] = [None] * n  # set when the call is sent

    def settle(self, i: int, result: Union[str, BaseException]) -> bool:
        """Record call i's result unless it is settled already; True if this settled it."""
        with self.cond:
            if self.done[i]:
                return False
            self.results[i], self.done[i] = result, True
            self.remaining -= 1
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
        with self.cond:
            self.deadline[i] = time.monotonic() + self.policy.call_timeout_s
            self.cond.notify()  # the caller now has a deadline to watch
        _workers.submit(partial(_attempts, call, self.policy, self, i))
        return True

    def finish(self, i: int, result: Union[str, BaseException]) -> None:
        """Call i ended by itself: settle it, free its slot, and tell its player's breaker."""
        settled = self.settle(i, result)
        self.release_slot(i)
        if settled:
            self.breakers[i].record(self, i, result)

    def abandon(self, i: int, error: SeatCallError) -> bool:
        """Stop waiting for call i: it fails with ``error``, stops retrying and frees its slot."""
        self.cancelled[i] = True
        settled = self.settle(i, error)
        self.release_slot(i)
        return settled


def _attempts(call: Callable[[], str], policy: CallPolicy, batch: _Batch, i: int) -> None:
    jitter = random.Random(i)  # jitter only spreads retries in time; it never touches results
    attempt = 0
    while True:
        attempt += 1
        try:
            result: Union[str, BaseException] = call()
            break
        except Exception as exc:  # noqa: BLE001 - every failure is recorded, never raised here
            result = exc
            if attempt >= policy.max_attempts or not is_transient(exc) or batch.cancelled[i]:
                break
            deadline = batch.deadline[i]
            pause = policy.backoff(attempt, jitter)
            if deadline is not None and time.monotonic() + pause >= deadline:
                break  # the next try could not finish in time: fail now and free the slot
            time.sleep(pause)
            if batch.cancelled[i]:
                break
    batch.finish(i, result)


def call_all(
    calls: Sequence[tuple[object, Callable[[], str]]], policy: CallPolicy
) -> list[Union[str, BaseException]]:
    """Run ``(player, call)`` pairs concurrently under the process-wide cap.

    Each result is the reply or the error; never raises for a failing call. A call past its
    deadline comes back as a ``SeatCallError``, and so does one refused by its player's breaker.
    Returns once every call is settled: none of them is retrying any more.
    """
    if not calls:
        return []
    batch = _Batch([player for player, _ in calls], policy)
    # One context copy per call, taken on this thread: the session's own sample id. Each call gets
    # its own copy because a Context cannot be entered by two threads at once.
    _dispatcher.enqueue([(batch, i, partial(contextvars.copy_context().run, call)) for i, (_, call) in enumerate(calls)])
    try:
        while True:
            expired = []
            with batch.cond:
                if not batch.remaining:
                    break
                now = time.monotonic()
                pending = [(d, i) for i, d in enumerate(batch.deadline) if d is not None and not batch.done[i]]
                expired = [i for d, i in pending if d <= now]
                if not expired:
                    # Calls still queued have no deadline yet; a start or an end wakes us.
                    batch.cond.wait(min((d for d, _ in pending), default=now + 1.0) - now)
                    continue
            for i in expired:
                # The worker only finishes the try it is in (it cannot be interrupted), then stops.
                error = SeatCallError(f"no answer within call_timeout_s={policy.call_timeout_s:g}s")
                if batch.abandon(i, error):
                    batch.breakers[i].record(batch, i, error)
    finally:
        _dispatcher.drop(batch)
    results = list(batch.results)
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]
