"""Progress of a long run on stderr: sessions and calls done, pace, refusals by the rate limit, ETA.

Redrawn in place on a terminal; one line every ``every_s`` seconds otherwise (a log file, a CI
job, a pipe). Nothing is printed for a run that ends before the first line is due.
``ECONARENA_PROGRESS_S`` sets the seconds between lines (0: none, for quiet). While evals' own
progress bar shows (``integration.progress_bar``), each line is a whole line printed above it.
"""
from __future__ import annotations

import math
import os
import sys
import threading
import time
from typing import Callable, Optional, TextIO

from ..calls.lanes import concurrency_in_use, waits
from ..calls.state import CallState
from ..integration.progress_bar import LineWriter, write_line

INTERVAL_ENV = "ECONARENA_PROGRESS_S"


def interval_asked() -> Optional[float]:
    """The seconds between progress lines the user asked for (``ECONARENA_PROGRESS_S``; 0: no progress
    lines), None when not set; ValueError when it is not a number of seconds."""
    raw = os.environ.get(INTERVAL_ENV, "").strip()
    if not raw:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds >= 0):
        raise ValueError(f"{INTERVAL_ENV} is the seconds between progress lines (0: none), got {raw!r}")
    return seconds


def duration(seconds: float) -> str:
    seconds = int(max(0, seconds))
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


def in_flight(call_state: CallState) -> str:
    """", 2 in flight (limit 2)" per lane; the limit only where the lane follows a server that
    serves fewer than it was sent, and the lane's model where there are several. A count is never
    above the limit printed beside it: calls sent before the limit was cut are said apart, and so
    are tries given up on (past their deadline) that the endpoint may still be decoding, which hold
    places of the limit until they return."""
    lanes = concurrency_in_use(call_state)
    parts = []
    for model, n, given_up, limit in lanes:
        part = (f"{model}: " if len(lanes) > 1 and model else "")
        if limit == float("inf"):
            part += f"{n} in flight"
        else:
            within = min(n, int(limit))
            part += f"{within} in flight (limit {limit:.0f})"
            if n > within:
                part += f" and {n - within} sent before the limit was cut"
        if given_up:
            part += f", {given_up} given up on still at the endpoint"
        parts.append(part)
    return (", " + "; ".join(parts)) if parts else ""


def waiting(call_state: CallState) -> str:
    """", waiting: the endpoint is overloaded (503/529), no answer for 45 s" while a lane waits on its
    endpoint's word; the lane's model where there are several."""
    lanes = waits(call_state)
    parts = [(f"{model}: " if len(lanes) > 1 and model else "") + f"the endpoint is {why}, no answer for {duration(s)}"
             for model, why, s in lanes]
    return (", waiting: " + "; ".join(parts)) if parts else ""


class Progress:
    def __init__(self, name: str, sessions: int, calls: int, sessions_done: Callable[[], int],
                 limits_line: Callable[[float, float], Optional[str]], call_state: CallState,
                 stream: TextIO = sys.stderr,
                 every_s: Optional[float] = None,
                 pace_line: Optional[Callable[[float, float, float], Optional[str]]] = None,
                 answered_by_batch: Callable[[], int] = lambda: 0,
                 usage_line: Optional[Callable[[], Optional[str]]] = None,
                 asked_s: Optional[float] = None) -> None:
        # pace_line(calls the server decodes at once, calls it answers a second, seconds so far):
        # said once, when a lane has learned that the server serves fewer calls than it was sent
        self.name, self.sessions, self.calls = name, sessions, calls
        self.sessions_done, self.limits_line, self.pace_line = sessions_done, limits_line, pace_line
        self.told_pace = False
        # usage_line(): said once, when the first answers' usage tells what the completions come to
        self.usage_line = usage_line
        self.answered_by_batch = answered_by_batch  # batch mode's answers, which no lane counts
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        asked = asked_s if every_s is None else None  # ECONARENA_PROGRESS_S, read once by the run
        self.quiet = asked == 0  # the user asked for no progress lines (the rarer lines still come)
        self.every_s = every_s if every_s is not None else asked or (1.0 if self.tty else 10.0)
        # set while evals' own progress bar shows: every line goes whole, above the bar (never redrawn in place)
        self.writer: Optional[LineWriter] = None
        self.stop_event = threading.Event()
        self.start_t = time.monotonic()
        self.call_state = calls = call_state  # the run's calls, whose lanes count what was sent and answered
        self.start_answered, self.start_sent, self.start_refused = calls.answered, calls.sent, calls.refused
        self.told_limits = False
        self.drawn = False
        self.thread = threading.Thread(target=self._loop, daemon=True, name="econarena-progress")

    def __enter__(self) -> "Progress":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_event.set()
        self.thread.join(2.0)
        if self.drawn and self.tty:
            print(file=self.stream, flush=True)

    def line(self) -> str:
        elapsed = max(1e-9, time.monotonic() - self.start_t)
        calls = self.call_state
        answered = calls.answered - self.start_answered + self.answered_by_batch()
        sent, refused = calls.sent - self.start_sent, calls.refused - self.start_refused
        per_min = answered / elapsed * 60
        left = max(0, self.calls - answered)
        eta = duration(left / (answered / elapsed)) if answered else "?"
        refusals = f", {refused / sent:.0%} refused by the rate limit" if refused else ""
        return (f"econarena: {self.name}: {self.sessions_done()}/{self.sessions} sessions, {answered:,}/{self.calls:,} "
                f"calls, {per_min:,.0f} calls/min{refusals}{in_flight(calls)}{waiting(calls)}, ETA {eta}")

    def _loop(self) -> None:
        calls = self.call_state
        while not self.stop_event.wait(self.every_s):
            if not self.told_limits and calls.limits:
                rpm, tpm = next(iter(calls.limits.values()))
                said = self.limits_line(rpm or 0.0, tpm or 0.0)
                if said:
                    self._print(said, newline=True)
                self.told_limits = True
            pace = next(iter(calls.served.values())).served() if calls.served and not self.told_pace else None
            if pace is not None and self.pace_line is not None:
                said = self.pace_line(*pace, time.monotonic() - self.start_t)
                if said:
                    self._print(said, newline=True)
                self.told_pace = True
            said = self.usage_line() if self.usage_line is not None else None
            if said:
                self._print(said, newline=True)
                self.usage_line = None
            if not self.quiet:
                self._print(self.line(), newline=not self.tty)

    def _print(self, text: str, newline: bool) -> None:
        if self.tty and self.writer is None:
            self.stream.write("\r\033[K" + text + ("\n" if newline else ""))
            self.stream.flush()
            self.drawn = True
        else:
            write_line(text, self.writer, self.stream)
