"""How many sessions evals plays at once: ``EVALS_THREADS``, read by ``Eval.eval_all_samples``.

evals 3.0.1.post1 has no argument for it, only the environment variable, read when
``eval_all_samples`` starts. Batch mode needs every session in play at once (a wave of all of them
is one batch, and a session only waits there), so the run raises it for that one call.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator

DEFAULT_THREADS = 10  # evals' own default


@contextmanager
def threads_for(sessions: int) -> Iterator[None]:
    """At least ``sessions`` threads for ``eval_all_samples`` called inside (0: as the user set it)."""
    before = os.environ.get("EVALS_THREADS")
    try:
        current = int(before) if before is not None else DEFAULT_THREADS
    except ValueError:
        current = DEFAULT_THREADS
    if sessions > current:
        os.environ["EVALS_THREADS"] = str(sessions)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("EVALS_THREADS", None)
        else:
            os.environ["EVALS_THREADS"] = before
