"""The log evals' recorder writes (``--record_path``): one live run per log, and one line when it
cannot even be created.

``hold_log`` takes a lock on the log for the life of the process, before evals' ``LocalRecorder``
opens it with "wb" (truncating it), so a second run on a log a live run is writing is refused
(exit 2) instead of both writing one file. A log that cannot be created (a full disk) gets the
line a failed write gets mid-run (``describe``) and exit status 4, instead of evals' traceback.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from .status import ON_REFUSE, STOPPED, refuse, under_cli

HELD_LOGS: dict[str, int] = {}  # real path of a log -> the descriptor whose lock this process holds on it


class LogInUse(ValueError):
    """The log is being written by another live run."""


def hold_log(path: Any) -> None:
    """Take the log's lock (``flock`` on the file itself) for this process's life, or refuse the run
    if another live process holds it. The kernel drops the lock when its holder dies, however it
    dies, so a killed run never blocks the next one. Anything that is not a local file the lock can
    be taken on (a blob URL, a missing directory that cannot be made) is left to evals as before."""
    path = os.fspath(path)
    if "://" in path:
        return
    real = os.path.realpath(path)
    held = HELD_LOGS.get(real)
    if held is not None:
        try:
            if os.fstat(held).st_ino == os.stat(real).st_ino:
                return  # this process's own earlier run on the path (a notebook, a test)
        except OSError:
            pass
    try:
        os.makedirs(os.path.dirname(real) or ".", exist_ok=True)
        fd = os.open(real, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        refuse(LogInUse(f"--record_path {path} is being written by another run that is still going: "
                        "wait for it to end, or give this run another --record_path"))
        return
    except OSError:  # a file system without locks: run as evals always did
        os.close(fd)
        return
    HELD_LOGS[real] = fd


def being_written(path: Any) -> bool:
    """True if another live process holds the log's lock (``hold_log``): a run is still writing it.
    A log this process writes itself, or one the lock cannot be asked about, is not."""
    real = os.path.realpath(os.fspath(path))
    if real in HELD_LOGS:
        return False
    try:
        fd = os.open(real, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def drop_unused_logs() -> None:
    """A run refused before any call leaves the log evals opened with its spec line (and the roster)
    alone: removed, so no log of a run that never ran lies in the log folder (a report would skip it
    anyway). One that holds a seat call's answer is kept, whatever happened."""
    for real in list(HELD_LOGS):
        try:
            with open(real, "rb") as f:
                head = f.read(1 << 20)
        except OSError:
            continue
        if len(head) < 1 << 20 and b'"type": "sampling"' not in head and b'"final_report"' not in head:
            try:
                os.remove(real)
            except OSError:
                pass


ON_REFUSE.append(drop_unused_logs)


def lock_record_path(local_recorder: type) -> None:
    """Wrap evals' ``LocalRecorder.__init__`` so that ``hold_log`` runs before the file is touched."""
    if getattr(local_recorder, "_econarena_locked", False):
        return
    init = local_recorder.__init__

    def __init__(self, log_path, *args, **kwargs):
        if log_path is not None:
            hold_log(log_path)
        try:
            init(self, log_path, *args, **kwargs)
        except OSError as exc:  # the log cannot even be created (a full disk): one line, as mid-run
            if under_cli():
                said = describe(os.fspath(log_path), exc)
                sys.stderr.write(f"econarena: stopped: the log cannot be written: {said}\n")
                sys.stderr.flush()
                raise SystemExit(STOPPED) from None  # no call was made
            raise

    local_recorder.__init__ = __init__
    local_recorder._econarena_locked = True


def mount_point(path: str) -> str:
    """The mount point of the filesystem holding ``path`` (the disk a user must free or avoid)."""
    p = Path(os.path.abspath(path))
    while not os.path.ismount(p) and p.parent != p:
        p = p.parent
    return str(p)


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def describe(path: str, exc: OSError) -> str:
    """``/mnt/x/log.jsonl on /mnt/x (0 B free of 2.0 MiB): [Errno 28] No space left on device``"""
    disk = mount_point(path)
    try:
        usage = shutil.disk_usage(disk)
        room = f" ({_size(usage.free)} free of {_size(usage.total)})"
    except OSError:
        room = ""
    error = f"[Errno {exc.errno}] {exc.strerror}" if exc.strerror else f"{type(exc).__name__}: {exc}"
    return f"{path} on {disk}{room}: {error}"
