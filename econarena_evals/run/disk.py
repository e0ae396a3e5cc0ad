"""A log that cannot be written (a full disk, a quota, a read-only or vanished filesystem) stops the run.

evals' recorder writes from its own code: on a flush every 100 events and 10 s (from whichever seat
call records the event that crosses the mark), on ``flush_events`` (``integration.recorder.durable``
after each session) and once more at exit; ``record_final_report`` writes on its own. An ``OSError`` there
raised out of a session (a traceback, exit 1, and the calls still queued went on being paid for),
and again from the exit flush. The first failed write stops the run instead: one
line on stderr naming the log, its filesystem and the OS error, no new request, exit status 4, and
the resume command; nothing more is written to that log (the events of the failed write are the
ones a resume plays again: they are not on disk). The guard itself is part of the one wrapper
on evals' recorder (``integration.recorder.wrap``); this module says what a failed write does.
"""
from __future__ import annotations

import sys
from typing import Any, Callable

from ..calls.state import CallState
from ..integration import status as exit_status
from ..integration.log_file import describe, mount_point
from ..integration.recorder import log_path_of, sessions_written, write_failed
from .resume_command import RESUME_DIR_ENV, hint_at_exit


def on_write_error(recorder: Any, call_state: CallState) -> Callable[[OSError], None]:
    """What the first failed write to ``recorder``'s log does (``integration.recorder.wrap`` calls
    it once): stop the run (``call_state``, its calls) with one line, exit status 4 and the resume command."""
    def failed(exc: OSError) -> None:
        path = log_path_of(recorder) or "the log"
        call_state.stop(f"the log cannot be written: {describe(path, exc)}")
        exit_status.fail(exit_status.STOPPED)
        print(f"econarena: stopped: the log cannot be written: {describe(path, exc)}", file=sys.stderr, flush=True)
        hint_at_exit(recorder, "The run stopped: its log could not be written.",
                     kept=lambda: {"finished": sessions_written(recorder)},
                     after=f"\n  (that new log would go on {mount_point(path)} too: free space there, or give "
                           f"--record_path a path on another disk; with {RESUME_DIR_ENV}=DIR set, "
                           "resume commands put the new log in DIR)")

    return failed


def failed(recorder: Any) -> bool:
    """True once a write of ``recorder`` to its log failed."""
    return write_failed(recorder)
