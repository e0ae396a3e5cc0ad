"""Seat calls: concurrent, capped, retried with backoff, and bounded by a deadline.

This is the only module that deals with threads. A seat call runs on a reused daemon worker, in
a copy of the caller's contextvars context, so evals' ``record_sampling`` inside a completion fn
still finds its sample id. The caller waits at most ``call_timeout_s`` for it: evals' own OpenAI
completion fns retry forever, and a deadline is the only way to stop waiting for them.
"""
from __future__ import annotations

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

_cap_lock = threading.Lock()
_cap: Optional[threading.BoundedSemaphore] = None
_cap_size: Optional[int] = None


def process_cap(size: int) -> threading.BoundedSemaphore:
    """The process-wide bound on seat calls in flight, shared by every session and eval."""
    global _cap, _cap_size
    with _cap_lock:
        if _cap is None or _cap_size != size:
            _cap, _cap_size = threading.BoundedSemaphore(size), size
        return _cap


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


class SeatCallError(RuntimeError):
    """A seat call that still failed after its retries, or ran past its deadline."""


@dataclass(frozen=True)
class CallPolicy:
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    call_timeout_s: float = 120.0
    max_attempts: int = 4
    backoff_base_s: float = 1.0
    backoff_cap_s: float = 20.0
    # After this many failed calls in a row for one player, with no success in between, its
    # endpoint is taken for down: further calls fail at once (one probe per probe_interval_s
    # may close it again), so a dead endpoint costs one deadline, not one per wave of sessions.
    breaker_threshold: int = 20
    probe_interval_s: float = 30.0

    def backoff(self, attempt: int, jitter: random.Random) -> float:
        """Capped exponential backoff with full jitter, for attempt 1, 2, ..."""
        return jitter.uniform(0, min(self.backoff_cap_s, self.backoff_base_s * 2 ** (attempt - 1)))


class Breaker:
    """Consecutive-failure circuit breaker for one player's endpoint."""

    def __init__(self, threshold: int, probe_interval_s: float) -> None:
        self.threshold, self.probe_interval_s = threshold, probe_interval_s
        self._lock = threading.Lock()
        self._failures = 0
        self._last_error = ""
        self._next_probe = 0.0

    def admit(self) -> Optional[str]:
        """None if a call may go out; else why it may not."""
        with self._lock:
            if self._failures < self.threshold:
                return None
            now = time.monotonic()
            if now >= self._next_probe:
                self._next_probe = now + self.probe_interval_s
                return None
            return f"endpoint taken for down after {self._failures} failed calls in a row; last: {self._last_error}"

    def record(self, ok: bool, error: str = "") -> None:
        with self._lock:
            if ok:
                self._failures = 0
            else:
                self._failures += 1
                self._last_error = error


_breakers: dict[int, Breaker] = {}
_breakers_lock = threading.Lock()


def breaker_for(player: object, policy: CallPolicy) -> Breaker:
    with _breakers_lock:
        b = _breakers.get(id(player))
        if b is None:
            b = _breakers[id(player)] = Breaker(policy.breaker_threshold, policy.probe_interval_s)
        return b


class _Workers:
    """Daemon worker threads, reused from call to call; a new one starts only when none is idle.

    Daemon, because a call we stopped waiting for may never return (evals' own OpenAI fns retry
    forever) and must not keep the process alive.
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
            threading.Thread(target=self._work, daemon=True).start()

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                job()
            finally:
                with self._lock:
                    self._idle += 1


_workers = _Workers()


class _Batch:
    """The calls of one ``call_all``: results, deadlines and cap slots, under one condition."""

    def __init__(self, n: int, cap: threading.BoundedSemaphore) -> None:
        self.cond = threading.Condition()
        self.results: list[Union[str, BaseException, None]] = [None] * n
        self.done = [False] * n
        self.remaining = n
        self.cancelled = [False] * n
        self.holds_slot = [False] * n
        self.cap = cap

    def release_slot(self, i: int) -> None:
        """Give call i's cap slot back once: when it ends, or when the caller stops waiting."""
        with self.cond:
            held, self.holds_slot[i] = self.holds_slot[i], False
        if held:
            self.cap.release()

    def settle(self, i: int, result: Union[str, BaseException]) -> bool:
        """Record call i's result unless it is settled already; True if this settled it."""
        with self.cond:
            if self.done[i]:
                return False
            self.results[i], self.done[i] = result, True
            self.remaining -= 1
            if self.remaining == 0:
                self.cond.notify()
            return True

    def finish(self, i: int, result: Union[str, BaseException]) -> None:
        self.settle(i, result)
        self.release_slot(i)


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
            time.sleep(policy.backoff(attempt, jitter))
            if batch.cancelled[i]:
                break
    batch.finish(i, result)


def call_all(
    calls: Sequence[tuple[object, Callable[[], str]]], policy: CallPolicy
) -> list[Union[str, BaseException]]:
    """Run ``(player, call)`` pairs concurrently under the process-wide cap.

    Each result is the reply or the error; never raises for a failing call. A call past its
    deadline comes back as a ``SeatCallError``, and so does one refused by its player's breaker.
    """
    cap = process_cap(policy.max_concurrency)
    batch = _Batch(len(calls), cap)
    deadlines: list[float] = [0.0] * len(calls)
    breakers = [breaker_for(player, policy) for player, _ in calls]
    for i, (_, call) in enumerate(calls):
        refused = breakers[i].admit()
        if refused is not None:
            batch.settle(i, SeatCallError(refused))
            continue
        cap.acquire()
        batch.holds_slot[i] = True
        deadlines[i] = time.monotonic() + policy.call_timeout_s
        _workers.submit(partial(contextvars.copy_context().run, _attempts, call, policy, batch, i))
    # Deadlines grow with i (calls start in order), so the first unsettled call is the next to expire.
    first = 0
    with batch.cond:
        while batch.remaining:
            while batch.done[first]:
                first += 1
            timeout = deadlines[first] - time.monotonic()
            if timeout > 0:
                batch.cond.wait(timeout)
                continue
            # A call we gave up on no longer counts: its worker only finishes the attempt it is
            # in (it cannot be interrupted), then stops.
            batch.cancelled[first] = True
            batch.settle(first, SeatCallError(f"no answer within call_timeout_s={policy.call_timeout_s:g}s"))
            batch.release_slot(first)
    for i in range(len(calls)):
        batch.release_slot(i)
    results: list[Union[str, BaseException]] = []
    for i, result in enumerate(batch.results):
        assert result is not None
        ok = not isinstance(result, BaseException)
        if deadlines[i]:  # calls the breaker refused say nothing new about the endpoint
            breakers[i].record(ok, "" if ok else f"{type(result).__name__}: {result}")
        results.append(result)
    return results
