"""How a run ends on a signal: Ctrl-C, SIGTERM and SIGHUP make one clean stop, whatever their number.

The exit status each asks for (130, 143, 129: the shell's 128 + signal number, so a script sees
the same status as for a process the signal killed) is kept with the others in the one module of
exit statuses, ``econarena_evals.integration.status``.
"""
from __future__ import annotations

import signal
import threading
from typing import Any, Callable

from ..integration.status import HUNG_UP, INTERRUPTED, TERMINATED, under_cli

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


# The one stop a process makes however many signals come: the first raises ``Signalled``; a later
# one raises only while the stop waits for the calls on the wire (``grace``: a second Ctrl-C leaves
# that wait at once), and is otherwise noted and passed over, so no signal lands in the stop's own
# writing (a traceback, no stop event, no resume command).
_STOP: dict[str, Any] = {"first": None, "again": 0, "grace": False}


def _on_signal(signum: int, frame: Any) -> None:
    if _STOP["first"] is None:
        _STOP["first"] = signum
        raise Signalled(signum)
    _STOP["again"] += 1
    if _STOP["grace"]:
        _STOP["grace"] = False  # once: the wait it ends is the only place it may land
        raise Signalled(signum)


def stopping() -> bool:
    """True once a signal has started the run's stop."""
    return _STOP["first"] is not None


def grace(on: bool) -> None:
    """While on, a further signal ends the wait for the calls on the wire (raises ``Signalled``)."""
    _STOP["grace"] = on


def stop_on_signals() -> Callable[[], None]:
    """Make Ctrl-C, SIGTERM and SIGHUP raise ``Signalled`` in the main thread, once however many
    come; returns what undoes it. After a signal, under the CLI, the handlers stay to the process's
    end: a signal during the stop's last writes is passed over, not a traceback."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    _STOP.update(first=None, again=0, grace=False)
    before = {signum: signal.signal(signum, _on_signal) for signum in _SIGNALS}

    def restore() -> None:
        if stopping() and under_cli():
            return
        for signum, handler in before.items():
            signal.signal(signum, handler)
        _STOP.update(first=None, again=0, grace=False)

    return restore


def interruption(exc: BaseException) -> tuple[str, int, str]:
    """(word, exit status, what the user pressed or sent) for a KeyboardInterrupt or ``Signalled``."""
    return _SIGNALS[getattr(exc, "signum", signal.SIGINT)]
