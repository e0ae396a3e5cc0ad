"""Durable sessions: what the eval has recorded is on disk before it counts as done.

A finished session is only worth keeping if it is on disk: evals' recorder buffers events and
writes them every 100 events and 10 s, so a ``kill -9`` loses finished sessions. ``durable()``
writes the buffer after each session (and after each answered seat call, and the roster before
the first); ``log_path_of`` is where that recorder writes.
"""
from __future__ import annotations

import threading
from typing import Any, Optional

_flush_lock = threading.Lock()


def durable(recorder: Any = None) -> None:
    """Write every event recorded so far to the log file before returning.

    ``flush_events`` takes the buffered events under the recorder's lock but writes them after
    releasing it, so a second thread's flush can return while the first is still writing the
    events both wanted. Our own lock makes every flush we start wait for the one before it; the
    recorder's automatic flush writes under its lock, so it too is finished when we take it.
    Written to the OS, not fsynced: that survives ``kill -9`` and an OOM kill; only a lost machine
    can take back what the OS holds (bench/durability.py measures both).
    """
    import evals.record  # here, not at the top: the report tools use this module without evals

    recorder = recorder or evals.record.default_recorder()
    if recorder is None:
        return
    with _flush_lock:
        recorder.flush_events()


def log_path_of(recorder: Any) -> Optional[str]:
    path = getattr(recorder, "event_file_path", None) or getattr(recorder, "local_fallback_path", None)
    return str(path) if path else None
