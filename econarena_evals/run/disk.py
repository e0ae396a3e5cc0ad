"""A log that cannot be written (a full disk, a quota, a read-only or vanished filesystem) stops the run.

evals' recorder writes from its own code: on a flush every 100 events and 10 s (from whichever seat
call records the event that crosses the mark), on ``flush_events`` (``durable.durable`` after each
session) and once more at exit; ``record_final_report`` writes on its own. An ``OSError`` there
raised out of a session (a traceback, exit 1, and the calls still queued went on being paid for),
and again from the exit flush. ``guard`` makes the first failed write stop the run instead: one
line on stderr naming the log, its filesystem and the OS error, no new request, exit status 4, and
the resume command; nothing more is written to that log (the events of the failed write are the
ones a resume plays again: they are not on disk).
"""
from __future__ import annotations

import sys
import threading
from typing import Any

from ..calls.state import stop_run
from ..integration.log_file import describe, mount_point
from ..log.format import SESSION_EVENT
from . import exit_status
from .durable import log_path_of
from .resume_command import RESUME_DIR_ENV, hint_at_exit

_lock = threading.Lock()


def guard(recorder: Any) -> None:
    """Make every write of ``recorder`` to its log stop the run on an ``OSError`` instead of raising."""
    if getattr(recorder, "_econarena_disk_guard", False) or not hasattr(recorder, "_flush_events_internal"):
        return
    flush, final = recorder._flush_events_internal, recorder.record_final_report
    recorder._econarena_disk = {"failed": False, "sessions": 0}

    def _flush_events_internal(events: Any) -> None:
        if recorder._econarena_disk["failed"]:
            return  # a line after a torn one would only be harder to read back
        try:
            flush(events)
        except OSError as exc:
            _failed(recorder, exc)
            return
        recorder._econarena_disk["sessions"] += sum(getattr(e, "type", None) == SESSION_EVENT for e in events)

    def record_final_report(report: Any) -> None:
        if recorder._econarena_disk["failed"]:
            return
        try:
            final(report)
        except OSError as exc:
            _failed(recorder, exc)

    recorder._flush_events_internal = _flush_events_internal
    recorder.record_final_report = record_final_report
    recorder._econarena_disk_guard = True


def _failed(recorder: Any, exc: OSError) -> None:
    with _lock:
        if recorder._econarena_disk["failed"]:
            return
        recorder._econarena_disk["failed"] = True
    path = log_path_of(recorder) or "the log"
    stop_run(f"the log cannot be written: {describe(path, exc)}")
    exit_status.fail(exit_status.STOPPED)
    print(f"econarena: stopped: the log cannot be written: {describe(path, exc)}", file=sys.stderr, flush=True)
    hint_at_exit(recorder, "The run stopped: its log could not be written.",
                        kept=lambda: {"finished": recorder._econarena_disk["sessions"]},
                        after=f"\n  (that new log would go on {mount_point(path)} too: free space there, or give "
                              f"--record_path a path on another disk; with {RESUME_DIR_ENV}=DIR set, "
                              "resume commands put the new log in DIR)")


def failed(recorder: Any) -> bool:
    """True once a write of ``recorder`` to its log failed (``guard``)."""
    return bool((getattr(recorder, "_econarena_disk", None) or {}).get("failed"))
