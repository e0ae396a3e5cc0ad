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
    """Consecutive-failure circuit breaker for one player's endpoint.

    When it opens, the calls of that player still waiting (admitted just before) are failed at
    once too, and the first probe waits ``probe_interval_s``: otherwise sessions starting while the
    first failures come in would each wait out a full deadline on a dead endpoint.
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

    def record(self, batch: "_Batch", i: int, ok: bool, error: str = "") -> None:
        with self._lock:
            if (batch, i) not in self._waiting:
                return  # already failed by the breaker opening
            self._waiting.discard((batch, i))
            if ok:
                self._failures = 0
                return
            self._failures += 1
            self._last_error = error
            if self._failures != self.threshold:
                return
            self._next_probe = time.monotonic() + self.probe_interval_s
            stranded, self._waiting = self._waiting, set()
            why = self._why()
        for other, j in stranded:
            other.cancelled[j] = True
            other.settle(j, SeatCallError(why))
            other.release_slot(j)


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

    def __init__(self, n: int, cap: threading.BoundedSemaphore, breakers: Sequence[Breaker]) -> None:
        self.breakers = breakers
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
        """Call i ended by itself: settle it, free its slot, and tell its player's breaker."""
        settled = self.settle(i, result)
        self.release_slot(i)
        if settled:
            ok = not isinstance(result, BaseException)
            self.breakers[i].record(self, i, ok, "" if ok else f"{type(result).__name__}: {result}")



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
    breakers = [breaker_for(player, policy) for player, _ in calls]
    batch = _Batch(len(calls), cap, breakers)
    deadlines: list[float] = [0.0] * len(calls)
    for i, (_, call) in enumerate(calls):
        cap.acquire()
        refused = breakers[i].admit(batch, i)
        if refused is not None:
            cap.release()
            batch.settle(i, SeatCallError(refused))
            continue
        batch.holds_slot[i] = True
        deadlines[i] = time.monotonic() + policy.call_timeout_s
        _workers.submit(partial(contextvars.copy_context().run, _attempts, call, policy, batch, i))
    # Deadlines grow with i (calls start in order), so the first unsettled call is the next to expire.
    first = 0
    while True:
        with batch.cond:
            if not batch.remaining:
                break
            while batch.done[first]:
                first += 1
            timeout = deadlines[first] - time.monotonic()
            if timeout > 0:
                batch.cond.wait(timeout)
                continue
        # A call we gave up on no longer counts: its worker only finishes the attempt it is in
        # (it cannot be interrupted), then stops. The breaker hears of it outside our lock, since
        # opening may fail other batches' calls.
        batch.cancelled[first] = True
        error = SeatCallError(f"no answer within call_timeout_s={policy.call_timeout_s:g}s")
        if batch.settle(first, error):
            batch.release_slot(first)
            breakers[first].record(batch, first, False, f"{type(error).__name__}: {error}")
    results = list(batch.results)
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]
