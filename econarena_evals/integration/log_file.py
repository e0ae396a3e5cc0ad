"""The log evals' recorder writes (``--record_path``): one live run per log, and one line when it
cannot even be created.

``hold_log`` takes a lock on the log for the life of the process, before evals' ``LocalRecorder``
opens it with "wb" (truncating it), so a second run on a log a live run is writing is refused
(exit 2) instead of both writing one file. Before that, ``source_problem`` refuses a log that is the
one the run resumes from (the same path, a symlink or a hard link to it, or a log in the folder it
resumes from): opening it would truncate what the resume is about to read. A log that cannot be created (a full disk) gets the
line a failed write gets mid-run (``describe``) and exit status 4, instead of evals' traceback.
"""
from __future__ import annotations

import fcntl
import os
import re
import shutil
import stat
import sys
from pathlib import Path
from typing import Any, Optional

from .status import ON_REFUSE, STOPPED, refuse, under_cli

# The eval arg ``resume_from`` and the environment variable that stands for it (``run.resume``)
RESUME_ARG, RESUME_ENV = "resume_from", "ECONARENA_RESUME"

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


def resume_source(run_spec: Any) -> Optional[str]:
    """The log or folder a run resumes from: its ``resume_from`` eval arg, else ``$ECONARENA_RESUME``."""
    run_config = getattr(run_spec, "run_config", None) or {}
    eval_spec = run_config.get("eval_spec") if isinstance(run_config, dict) else None
    args = getattr(eval_spec, "args", None)
    if args is None and isinstance(eval_spec, dict):
        args = eval_spec.get("args")
    value = (args or {}).get(RESUME_ARG) if isinstance(args, dict) else None
    value = value if value not in (None, "") else os.environ.get(RESUME_ENV, "")
    return str(value) if value else None


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def source_problem(log_path: Any, source: Optional[str]) -> Optional[str]:
    """Why writing ``log_path`` would destroy the log a run resumes from (``source``), or None.

    The record path is the source itself, a symlink or a hard link to it (one inode), or, when the
    source is a folder, any of the logs in it (a resume from a folder reads each of them). A record
    path that does not exist yet, or an empty file, loses nothing."""
    path = os.fspath(log_path)
    if "://" in path:
        return None
    try:
        mine = os.stat(path)
    except OSError:
        return None  # no file there yet: nothing to lose
    if not stat.S_ISREG(mine.st_mode) and not stat.S_ISDIR(mine.st_mode):  # a FIFO would block the open for ever
        return f"--record_path {path} is not a regular file (a FIFO, a socket or a device): give the log a file's path"
    if not source or mine.st_size == 0:
        return None
    src = os.path.expanduser(source)
    try:
        theirs = os.stat(src)
    except OSError:
        return None  # the resume says the source is missing, in its own line
    said = f"--record_path {path}"
    if stat.S_ISDIR(theirs.st_mode):
        for found in sorted(Path(src).rglob("*.jsonl")):
            try:
                if _same_file(os.stat(found), mine):
                    which = "" if os.path.realpath(found) == os.path.realpath(path) else f" (as {found})"
                    return (f"{said} is a log in the folder resume_from={source}{which}: this run would "
                            "write over it before reading it. Give this run a new --record_path (the log is untouched)")
            except OSError:
                continue
        return None
    if _same_file(theirs, mine):
        how = ("the same file" if os.path.realpath(path) == os.path.realpath(src)
               else "a hard link to the same file")
        return (f"{said} is {how} as resume_from={source}: this run would write over the log it resumes from "
                "before reading it. Give this run a new --record_path (the log is untouched)")
    return None


class WritesOverItsSource(ValueError):
    """The record path is the log the run resumes from."""


def being_written(path: Any) -> bool:
    """True if another live process holds the log's lock (``hold_log``): a run is still writing it.
    A log this process writes itself, or one the lock cannot be asked about, is not."""
    real = os.path.realpath(os.fspath(path))
    if real in HELD_LOGS:
        return False
    try:  # never blocks: a FIFO with no writer would block a plain open for ever
        fd = os.open(real, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
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
                folder = os.path.dirname(real)
                # evals' default path, /tmp/evallogs/<run id>_<fn>_<eval>.jsonl, makes a folder of
                # the run id when the fn's name holds a "/" (econarena/nash): it goes with the log
                if _EVALS_RUN_FOLDER.match(os.path.basename(folder)) and not os.listdir(folder):
                    os.rmdir(folder)
            except OSError:
                pass


# evals' run id (``yymmddhhmmss`` and 8 letters or digits) and the fn name's start: a folder evals made
_EVALS_RUN_FOLDER = re.compile(r"\d{12}[A-Z0-9]{8}_[^/]+\Z")


ON_REFUSE.append(drop_unused_logs)


def lock_record_path(local_recorder: type) -> None:
    """Wrap evals' ``LocalRecorder.__init__`` so that ``hold_log`` runs before the file is touched."""
    if getattr(local_recorder, "_econarena_locked", False):
        return
    init = local_recorder.__init__

    def __init__(self, log_path, *args, **kwargs):
        if log_path is not None:
            why = source_problem(log_path, resume_source(kwargs.get("run_spec", args[0] if args else None)))
            if why:  # before the file is opened (truncated): the log resumed from stays as it was
                refuse(WritesOverItsSource(why))
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
