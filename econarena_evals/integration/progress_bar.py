"""evals' own progress bar and the eval's progress lines on stderr, never on one line.

``Eval.eval_all_samples`` in evals 3.0.1.post1 draws a tqdm bar of finished samples on stderr unless
``EVALS_SHOW_EVAL_PROGRESS`` is set empty; the bar is redrawn with carriage returns and no newline,
so a line printed beside it lands on the bar's line (in a log file, every progress line followed
a bar). The eval's own progress lines say what the bar says (sessions done) and more (calls, pace,
ETA), so for one ``eval_all_samples`` the bar is off, unless the user set the variable to a
non-empty value to have it: then each line of ours is printed through tqdm, which takes the bar
off its line, prints the line and draws the bar again below it.
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


def write_line(text: str, writer: Optional[LineWriter] = None, stream: Optional[TextIO] = None) -> None:
    """One whole line on ``stream`` (stderr), in one write; through ``writer`` when evals' bar shows."""
    stream = stream or sys.stderr
    if writer is not None:
        writer(text, stream)
        return
    stream.write(text + "\n")
    stream.flush()
