"""Worker processes for the report tools: the per-log work of hundreds of logs on every core.

``econarena-summary`` and ``econarena-report`` spend most of their time on work that each log
needs on its own (reading and re-scoring it, fitting its player's depth of reasoning, reading its
seats' replies) and on plots that each cell needs on its own. ``Workers`` runs such work in a pool
of at most ``os.cpu_count()`` processes, or in this process when given one worker (the library's
default, and what the tests use): the answers are the same either way, in the same order, since
every task is a pure function of its arguments.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from typing import Any, Callable, Iterable, Iterator, Optional, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def default_workers() -> int:
    """The machine's cores (``os.cpu_count()``), at least 1."""
    return max(1, os.cpu_count() or 1)


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of processes, not {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("at least 1 process")
    return n


def add_workers_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=_count, default=None, metavar="N",
                        help="processes that read the logs (and draw the plots) side by side: at most the "
                             f"machine's cores, which is the default ({default_workers()} here); 1 reads them "
                             "in this process, one after the other")


class _Done:
    """What ``Workers.submit`` gives in one process: the answer, computed at once."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.value = fn(*args)

    def get(self) -> Any:
        return self.value


class Workers:
    """A pool of ``n`` processes (``n`` <= 1: none, the work runs here), as a context manager.

    The processes are forked where the platform forks safely (Linux), else spawned; they are
    started once, when the pool is entered, and stopped when it is left."""

    def __init__(self, n: Optional[int] = 1) -> None:
        self.n = default_workers() if n is None else max(1, min(int(n), default_workers()))
        self._pool: Any = None

    def __enter__(self) -> "Workers":
        if self.n > 1:
            methods = multiprocessing.get_all_start_methods()
            method = "fork" if sys.platform.startswith("linux") and "fork" in methods else "spawn"
            self._pool = multiprocessing.get_context(method).Pool(self.n)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._pool is not None:
            if exc[0] is None:
                self._pool.close()
            else:
                self._pool.terminate()
            self._pool.join()
            self._pool = None

    def imap(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """``fn`` of each item, in the items' order, as each is ready (``fn``: a module's function, or a
        ``functools.partial`` of one, so that it reaches another process)."""
        if self._pool is None:
            return map(fn, items)
        return self._pool.imap(fn, items, chunksize=1)

    def submit(self, fn: Callable[..., R], *args: Any) -> Any:
        """Start ``fn(*args)``; the answer is the returned object's ``get()``."""
        if self._pool is None:
            return _Done(fn, args)
        return self._pool.apply_async(fn, args)
