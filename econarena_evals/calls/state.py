"""The state of one run's calls, in one owner: the run's call policy (its options, read once when
the run starts), why the run stopped (if it did), the lanes, the players' breakers, the cap on
calls in flight with its queue, and the worker threads.

The run that owns it makes it and hands it down: ``run.eval`` (an oaieval run) to the dispatcher,
batch mode's rounds, the shell (stops, the progress line, the last lines) and the log's write guard;
``on_inspect.endpoint`` makes one per endpoint (inspect's front end), and the verifiers env one per
env (``on_verifiers.plugin``), which its seats' endpoints share. There is no instance of it for the
process: two runs in one process (in-process use, tests) share nothing, not a stop, not a lane.
A call still out from a run before keeps the lane, breaker and slots of its own run, so its end
moves nothing of a new run's.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Hashable, Optional

from ..core.redact import redact_text
from .policy import CallPolicy
from .slots import Slots, Workers


class CallState:
    def __init__(self, policy: Optional[CallPolicy] = None) -> None:
        # the run's options, frozen: every call of the run is tried, paced and bounded by them
        self.policy = policy if policy is not None else CallPolicy()
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.workers = Workers()
        self.stop_reason: Optional[str] = None
        self.stop_word: Optional[str] = None  # "quota", "interrupted", ...: the summary's "stopped: <word>"
        # key -> Lane (``lanes.lane_for``), and the lanes' own account of what they learned
        self.lanes: dict[Hashable, Any] = {}
        self.limits: dict[Hashable, tuple[Optional[float], Optional[float]]] = {}  # lane -> (rpm, tpm)
        self.served: dict[Hashable, Any] = {}  # the lanes whose concurrency limit was cut: a server's pace
        # id(player) -> (player, Breaker) (``dispatch.breaker_for``)
        self.breakers: dict[int, tuple[object, Any]] = {}
        self.slots = Slots(self)

    def stop(self, reason: str, word: str = "stopped") -> None:
        """No new request goes out from now on; calls waiting or queued fail with ``RunStopped``.
        ``word`` names the cause in one word for the log (``econarena_stop``) and the summary. The
        reason may quote the server (``Server said: no such path /v1/...?key=...``): masked here, once,
        for every place that prints or records it."""
        reason = redact_text(reason)
        with self.lock:
            if self.stop_reason is None:
                self.stop_reason, self.stop_word = reason, word
        self.stopped.set()
        for lane in list(self.lanes.values()):
            lane.wake()

    # The counters for the progress line are the lanes' own, summed when read (once a second):
    # one lock taken twice per call cost more than the rest of the call's bookkeeping.
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

    def wait_in_flight(self, timeout_s: float) -> int:
        """Wait up to ``timeout_s`` for the requests already sent to end (answered and recorded, or
        failed); returns how many are still out. After a stop, what is in flight is paid for anyway:
        kept in the log, a resume need not pay for it again."""
        deadline = time.monotonic() + timeout_s
        while True:
            out = self.in_flight()
            if out <= 0 or time.monotonic() >= deadline:
                return max(0, out)
            time.sleep(0.01)
