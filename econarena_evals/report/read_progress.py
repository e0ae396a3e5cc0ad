"""Progress of a long read on stderr: which stage, logs and bytes done, seconds so far.

``econarena-report`` and ``econarena-summary`` read hundreds of logs (750 logs are 1.7 GB): a line
every ``EVERY_S`` seconds at most says where they are, so that no stage is silent for longer. A run
that ends before the first line is due prints nothing. The stages tell it what they did
(``start``, ``step``); what a line says is ``line``'s.
"""
from __future__ import annotations

import sys
import time
from typing import Callable, Optional, TextIO

EVERY_S = 5.0


def line(tool: str, stage: str, done: int, total: int, unit: str, nbytes: int, total_bytes: int,
         seconds: float) -> str:
    """'econarena-report: reading logs: 120/750 logs, 266/1700 MB, 12 s'."""
    size = f", {nbytes / 1e6:,.0f}/{total_bytes / 1e6:,.0f} MB" if total_bytes else ""
    return f"{tool}: {stage}: {done}/{total} {unit}{size}, {seconds:.0f} s"


class Progress:
    def __init__(self, tool: str, stream: Optional[TextIO] = None, every_s: float = EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.tool, self.stream, self.every_s, self.clock = tool, stream, every_s, clock
        self.begun = self.last = clock()
        self.stage, self.unit, self.total, self.total_bytes, self.done, self.nbytes = "", "", 0, 0, 0, 0

    def start(self, stage: str, total: int, unit: str = "logs", total_bytes: int = 0) -> None:
        self.stage, self.unit, self.total, self.total_bytes, self.done, self.nbytes = (
            stage, unit, total, total_bytes, 0, 0)

    def step(self, nbytes: int = 0) -> None:
        self.done += 1
        self.nbytes += nbytes
        now = self.clock()
        if now - self.last >= self.every_s:
            self.last = now
            print(line(self.tool, self.stage, self.done, self.total, self.unit, self.nbytes, self.total_bytes,
                       now - self.begun), file=self.stream or sys.stderr, flush=True)
