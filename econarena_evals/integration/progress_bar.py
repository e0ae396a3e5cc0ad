"""evals' own progress bar and the eval's progress lines on stderr, never on one line.

``Eval.eval_all_samples`` in evals 3.0.1.post1 draws a tqdm bar of finished samples on stderr unless
``EVALS_SHOW_EVAL_PROGRESS`` is set empty; the bar is redrawn with carriage returns and no newline,
so a line printed beside it lands on the bar's line (in a log file, every progress line followed
a bar). The eval's own progress lines say what the bar says (sessions done) and more (calls, pace,
ETA), so for one ``eval_all_samples`` the bar is off, unless the user set the variable to a
non-empty value to have it: then each line of ours is printed through tqdm, which takes the bar
off its line, prints the line and draws the bar again below it.

tqdm starts a monitor thread for every bar, a disabled one too, and a disabled bar never stops it:
it lives on, waking every 10 s, until tqdm's exit handler wakes it once more while the interpreter
shuts down, which a thread should not be doing then (tqdm's own tracker has sporadic segfaults at
exit from it). Once ``eval_all_samples`` is done and no bar is left, the monitor is stopped and
joined here, so the run leaves no such thread behind.
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, TextIO

ENV = "EVALS_SHOW_EVAL_PROGRESS"

LineWriter = Callable[[str, TextIO], None]


def _through_tqdm(text: str, stream: TextIO) -> None:
    from tqdm import tqdm

    tqdm.write(text, file=stream)
    stream.flush()


@contextmanager
def bar_unless_asked() -> Iterator[Optional[LineWriter]]:
    """Inside, evals' bar is off unless ``EVALS_SHOW_EVAL_PROGRESS`` holds a non-empty value; yields
    None when it is off, else how to write a whole line to stderr without breaking into the bar."""
    before = os.environ.get(ENV)
    if not before:
        os.environ[ENV] = ""
    try:
        yield _through_tqdm if before else None
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        stop_idle_monitor()


def stop_idle_monitor() -> None:
    """Stop and join tqdm's monitor thread if no bar is left for it to watch."""
    tqdm_cls = getattr(sys.modules.get("tqdm.std"), "tqdm", None)
    if tqdm_cls is None:  # tqdm never imported: no monitor
        return
    with tqdm_cls.get_lock():
        monitor = getattr(tqdm_cls, "monitor", None)
        if monitor is None or len(tqdm_cls._instances):
            return
        tqdm_cls.monitor = None  # the next bar starts a new one
    monitor.exit()  # wakes it and waits for it to end


def write_line(text: str, writer: Optional[LineWriter] = None, stream: Optional[TextIO] = None) -> None:
    """One whole line on ``stream`` (stderr), in one write; through ``writer`` when evals' bar shows."""
    stream = stream or sys.stderr
    if writer is not None:
        writer(text, stream)
        return
    stream.write(text + "\n")
    stream.flush()
