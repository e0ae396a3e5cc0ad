"""A run's cap on calls in flight, its FIFO queue, and the worker threads that make the calls.

The only module that starts threads. A call that waits for a slot of
the cap (``max_concurrency``) waits in the queue and holds nothing: no slot, no thread. Slots are
handed out in order as calls end, so the wait is bounded by the calls ahead of it, each of which is
bounded in turn. A run's call state (``state.CallState``) owns one ``Slots`` and one ``Workers``.
"""
from __future__ import annotations

import collections
import queue
import threading
from typing import Any, Callable, Sequence

from .errors import RunStopped

# How long a worker waits for its next call before it ends: the workers of a run that is over (its
# call state is dropped) do not stay for the rest of the process; a busy run keeps its workers.
IDLE_S = 60.0


class Workers:
    """Daemon worker threads, reused from call to call; a new one starts only when none is idle.

    Daemon, because a call we stopped waiting for may not return soon (a custom completion fn may
    block or retry on its own) and must not keep the process alive. One idle for ``IDLE_S`` ends.
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
            try:
                job = self._jobs.get(timeout=IDLE_S)
            except queue.Empty:
                with self._lock:
                    # none idle: a submit counted on this thread, and its job is in the queue for it
                    if self._idle > 0:
                        self._idle -= 1
                        return
                continue
            try:
                job()
            finally:
                with self._lock:
                    self._idle += 1


class Slots:
    """The cap on calls in flight and the FIFO queue of calls waiting for a slot.

    ``run`` is the run's call state whose stop fails every queued call at once (``stopped``, ``stop_reason``).
    A queued item is (its group, the call: ``retry.Call``); the group starts or settles it.
    """

    def __init__(self, run: Any) -> None:
        self.run = run
        self._lock = threading.Lock()
        self._pending: collections.deque = collections.deque()
        self.in_flight = 0

    def enqueue(self, items: Sequence[tuple[Any, Any]]) -> None:
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
        run = self.run
        while True:
            with self._lock:
                stopped = run.stopped.is_set()
                if not self._pending or (not stopped and self.in_flight >= self._pending[0][0].policy.max_concurrency):
                    return
                group, call = self._pending.popleft()
                if call.done:
                    continue
                if not stopped:
                    self.in_flight += 1
            if stopped:
                group.settle(call, RunStopped(run.stop_reason or "run stopped"))
            elif not group.start(call):
                with self._lock:  # refused by its breaker: the slot goes straight to the next call
                    self.in_flight -= 1

    def drop(self, group: Any) -> None:
        """Forget the queued calls of a group whose caller has stopped waiting."""
        with self._lock:
            self._pending = collections.deque(item for item in self._pending if item[0] is not group)
