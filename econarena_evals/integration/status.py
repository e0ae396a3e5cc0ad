"""The exit status of an ``oaieval`` process, and the one answer to "is this process the CLI?".

evals 3.0.1.post1's ``oaieval`` exits 0 whatever happened inside the eval. The eval asks for a
status here (``fail``); ``apply_at_exit``, registered when evals' registry is imported (before
evals' recorder registers its own flush), applies it as the very last thing the process does,
after the log is written. This module's state is the only channel: the eval and the exit handler
import the same module.

Codes: 0 every session finished; 2 refused before any call; 3 some session errored; 4 the run
stopped early; 130 interrupted (Ctrl-C); 143 terminated (SIGTERM); 129 hung up (SIGHUP). The last
three are the shell's 128 + signal number. What each means for a run: docs/reliability.md.
"""
from __future__ import annotations

import atexit
import os
import sys
from typing import Callable, Optional

REFUSED = 2
ERRORED = 3
STOPPED = 4
INTERRUPTED = 130
TERMINATED = 143
HUNG_UP = 129

CLI_NAMES = ("oaieval", "oaieval.py", "oaievalset", "oaievalset.py")

_status = {"requested": 0, "applies": False}


def under_cli() -> bool:
    """True in the ``oaieval`` or ``oaievalset`` process itself; False in-process (a test, a
    notebook), which keeps its own exceptions and exit status."""
    return os.path.basename(sys.argv[0] if sys.argv else "") in CLI_NAMES


def fail(code: int) -> None:
    """Ask for a non-zero exit status; the most serious asked for wins. Applies only under the CLI."""
    _status["requested"] = max(_status["requested"], int(code))


def requested() -> int:
    return _status["requested"]


def refuse(exc: Exception, who: Optional[str] = None) -> None:
    """A refusal before any call: under the CLI, one line and exit status 2 instead of evals'
    traceback around it; in-process, the exception as it is. ``who`` starts the line: the plugin
    (None), or the CLI itself where the mistake is one in evals' own terms (an eval's name)."""
    if not under_cli():
        raise exc
    print(f"{who}: {exc}" if who else f"econarena: {exc}", file=sys.stderr, flush=True)
    for tidy in ON_REFUSE:
        tidy()
    raise SystemExit(REFUSED) from None


# What a refused run leaves behind and should not (``log_file`` adds its spec-only log)
ON_REFUSE: list[Callable[[], None]] = []


def apply_at_exit() -> None:
    """Under the CLI, make the requested status the process's exit status. Call it before evals'
    recorder registers its exit flush: exit handlers run last-registered first."""
    if _status["applies"] or not under_cli():
        return
    atexit.register(_apply)
    _status["applies"] = True


def _apply() -> None:
    code = _status["requested"]
    if code:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed stream must not keep the status from applying
                pass
        os._exit(code)  # SystemExit from an exit handler would be ignored
