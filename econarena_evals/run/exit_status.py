"""The exit status of an ``oaieval`` run: non-zero when a session errored or the run stopped early.

evals 3.0.1.post1's ``oaieval`` exits 0 whatever happened inside the eval, so a batch script, or
``oaievalset`` (which stops at a failing eval by default), could not tell a run where sessions
errored from a clean one. The eval asks for a status here; the plugin's start-up hook
(``econarena_evals_hook``), which registered its exit handler before evals' recorder registered its
own, applies it as the very last thing the process does, after the log is written.

Codes: 0 every session finished; 2 refused before any call (a bad eval arg, a resume from another
condition); 3 some session errored; 4 the run stopped early (an error no retry cures: quota, key,
model; or the rate-limit patience ran out); 130 interrupted (Ctrl-C); 143 terminated (SIGTERM, what
``timeout`` and schedulers send); 129 hung up (SIGHUP, a closed terminal). The last three are the
shell's 128 + signal number, so a script sees the same status as for a process the signal killed.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any, Callable

REFUSED = 2
ERRORED = 3
STOPPED = 4
INTERRUPTED = 130
TERMINATED = 143
HUNG_UP = 129

# signal -> (the stop's word in the log and the summary, exit status, what the user is told)
_SIGNALS = {signal.SIGINT: ("interrupted", INTERRUPTED, "Ctrl-C"),
            signal.SIGTERM: ("terminated", TERMINATED, "SIGTERM")}
if hasattr(signal, "SIGHUP"):
    _SIGNALS[signal.SIGHUP] = ("hung up", HUNG_UP, "SIGHUP")


class Signalled(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread where Ctrl-C raises KeyboardInterrupt, so all
    three end the run the same way: what was answered is kept and the resume command printed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise(signum: int, frame: Any) -> None:
    raise Signalled(signum)


def stop_on_signals() -> Callable[[], None]:
    """Make SIGTERM and SIGHUP raise ``Signalled`` in the main thread; returns what undoes it."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    before = {}
    for signum in _SIGNALS:
        if signum != signal.SIGINT:
            before[signum] = signal.signal(signum, _raise)

    def restore() -> None:
        for signum, handler in before.items():
            signal.signal(signum, handler)

    return restore


def interruption(exc: BaseException) -> tuple[str, int, str]:
    """(word, exit status, what the user pressed or sent) for a KeyboardInterrupt or ``Signalled``."""
    return _SIGNALS[getattr(exc, "signum", signal.SIGINT)]


def fail(code: int) -> None:
    """Ask for a non-zero exit status (the most serious asked for wins) if the process is ``oaieval``."""
    hook = sys.modules.get("econarena_evals_hook")
    state = getattr(hook, "STATE", None)
    if isinstance(state, dict):
        state["exit_status"] = max(int(state.get("exit_status") or 0), int(code))


def requested() -> int:
    hook = sys.modules.get("econarena_evals_hook")
    return int((getattr(hook, "STATE", None) or {}).get("exit_status") or 0)


def under_oaieval() -> bool:
    return os.path.basename(sys.argv[0] if sys.argv else "") in ("oaieval", "oaieval.py")


def refuse(exc: Exception) -> None:
    """A refusal before any call: under ``oaieval``, one line and exit status 2 instead of evals'
    traceback around it; in-process (a notebook, a test), the exception as it is."""
    if not under_oaieval():
        raise exc
    print(f"econarena: {exc}", file=sys.stderr, flush=True)
    raise SystemExit(REFUSED) from None
