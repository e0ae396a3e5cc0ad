"""The state of the run's calls, in one owner: why the run stopped (if it did), the lanes,
the players' breakers, the cap on calls in flight with its queue, and the worker threads.

``CALL_STATE`` is the one instance for the process; ``CALL_STATE.reset()`` (``eval.run``, at the start of each
run) starts the next run in the same process with none of the last one's state: not stopped, no
lane, no breaker, an empty queue. The worker threads are kept: they hold nothing of a run.
A call still out from the run before keeps the lane, breaker and slots it started with, so its
end moves nothing of the new run's.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Hashable, Optional

from ..core.redact import redact_text
from .slots import Slots, Workers


class CallState:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.workers = Workers()
        self._fresh()

    def _fresh(self) -> None:
        self.stop_reason: Optional[str] = None
        self.stop_word: Optional[str] = None  # "quota", "interrupted", ...: the summary's "stopped: <word>"
        self.stopped.clear()
        # key -> Lane (``lanes.lane_for``), and the lanes' own account of what they learned
        self.lanes: dict[Hashable, Any] = {}
        self.limits: dict[Hashable, tuple[Optional[float], Optional[float]]] = {}  # lane -> (rpm, tpm)
        self.served: dict[Hashable, Any] = {}  # the lanes whose concurrency limit was cut: a server's pace
        # id(player) -> (player, Breaker) (``dispatch.breaker_for``)
        self.breakers: dict[int, tuple[object, Any]] = {}
        self.slots = Slots(self)

    def reset(self) -> None:
        """A new run in this process (an eval run in-process after another): see the module."""
        with self.lock:
            self._fresh()

    def stop(self, reason: str, word: str = "stopped") -> None:
        with self.lock:
            if self.stop_reason is None:
                self.stop_reason, self.stop_word = reason, word
        self.stopped.set()
        for lane in list(self.lanes.values()):
            lane.wake()

    # The counters for the progress line are the lanes' own, summed when read (once a second):
    # one process-wide lock taken twice per call cost more than the rest of the call's bookkeeping.
    @property
    def sent(self) -> int:
        return sum(lane.sent for lane in list(self.lanes.values()))

    @property
    def refused(self) -> int:
        return sum(lane.refusals for lane in list(self.lanes.values()))

    @property
    def answered(self) -> int:
        return sum(lane.answered for lane in list(self.lanes.values()))

    def in_flight(self) -> int:
        return sum(lane.in_flight for lane in list(self.lanes.values()))


CALL_STATE = CallState()


def stop_run(reason: str, word: str = "stopped") -> None:
    """No new request goes out from now on; calls waiting or queued fail with ``RunStopped``.
    ``word`` names the cause in one word for the log (``econarena_stop``) and the summary. The
    reason may quote the server (``Server said: no such path /v1/...?key=...``): masked here, once,
    for every place that prints or records it."""
    CALL_STATE.stop(redact_text(reason), word)


def wait_in_flight(timeout_s: float) -> int:
    """Wait up to ``timeout_s`` for the requests already sent to end (answered and recorded, or
    failed); returns how many are still out. After a stop, what is in flight is paid for anyway:
    kept in the log, a resume need not pay for it again."""
    deadline = time.monotonic() + timeout_s
    while True:
        out = CALL_STATE.in_flight()
        if out <= 0 or time.monotonic() >= deadline:
            return max(0, out)
        time.sleep(0.01)
