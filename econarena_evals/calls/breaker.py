"""A circuit breaker per player: after ``breaker_threshold`` endpoint failures in a row its endpoint
is presumed down, and its calls (waiting or queued) fail at once, one probe every
``probe_interval_s`` excepted. The breakers of a run belong to the run state (``state.CALL_STATE.breakers``).
"""
from __future__ import annotations

import threading
import time
from typing import Any, Optional, Union

from .errors import SeatCallError, described, is_endpoint_failure
from .policy import CallPolicy
from .state import CALL_STATE


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
        self._answered = 0  # calls it answered in this run: "never answered" is a wrong address, not a crash
        self._last_error = ""
        self._next_probe = 0.0
        self._waiting: set[tuple[Any, Any]] = set()  # (batch, call) of the calls admitted and not yet ended

    def _why(self) -> str:
        since = f"after {self._answered} answered" if self._answered else "none answered in this run"
        return (f"endpoint presumed down after {self._failures} failed calls in a row, {since}; "
                f"last: {self._last_error}")

    def down(self) -> Optional[str]:
        """Why the endpoint is presumed down now; None while it is not."""
        with self._lock:
            return self._why() if self._failures >= self.threshold else None

    def admit(self, batch: Any, call: Any) -> Optional[str]:
        """None if ``call`` of ``batch`` may go out (it is then tracked); else why it may not."""
        with self._lock:
            if self._failures >= self.threshold:
                now = time.monotonic()
                if now < self._next_probe:
                    return self._why()
                self._next_probe = now + self.probe_interval_s
            self._waiting.add((batch, call))
            return None

    def record(self, batch: Any, call: Any, result: Union[str, BaseException]) -> None:
        ok = not isinstance(result, BaseException)
        with self._lock:
            if (batch, call) not in self._waiting:
                return  # already failed by the breaker opening
            self._waiting.discard((batch, call))
            if ok:
                self._failures = 0
                self._answered += 1
                return
            if not is_endpoint_failure(result):  # type: ignore[arg-type]
                return
            self._failures += 1
            self._last_error = described(result)  # type: ignore[arg-type]
            if self._failures != self.threshold:
                return
            self._next_probe = time.monotonic() + self.probe_interval_s
            stranded, self._waiting = self._waiting, set()
            why = self._why()
        for other, call in stranded:
            other.abandon(call, SeatCallError(why))



def breaker_for(player: object, policy: CallPolicy) -> Breaker:
    """The run's breaker for ``player``. Keyed by id(player), the player kept alive with it, so that
    its id cannot be reused by a new object that would inherit a stale breaker; players are few."""
    with CALL_STATE.lock:
        entry = CALL_STATE.breakers.get(id(player))
        if entry is None:
            breaker = Breaker(policy.breaker_threshold, policy.probe_interval_s)
            entry = CALL_STATE.breakers[id(player)] = (player, breaker)
        return entry[1]


def endpoints_down() -> list[str]:
    """Why each endpoint of the run that is presumed down now is (one per player whose breaker is open)."""
    with CALL_STATE.lock:
        breakers = [breaker for _, breaker in CALL_STATE.breakers.values()]
    return [why for why in (b.down() for b in breakers) if why]
