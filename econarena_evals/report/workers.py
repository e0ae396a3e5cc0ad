"""Worker processes for the report tools: the per-log work of hundreds of logs on every core.

``econarena-summary`` and ``econarena-report`` spend most of their time on work that each log
needs on its own (reading and re-scoring it, fitting its player's depth of reasoning, reading its
seats' replies) and on plots that each cell needs on its own. ``Workers`` runs such work in at most
``os.cpu_count()`` processes, or in this process when given one worker (the library's default, and
what the tests use): the answers are the same either way, in the same order, since every task is a
pure function of its arguments.

No worker can hang the tool. This process knows which task each worker holds, and waits on the
workers' answers and on their deaths at once: a worker that dies (a crash, the OOM killer, a
``kill -9``), or whose answer cannot be sent back (too deep to pickle), fails its own task
(``WorkerFailed``, naming how), is replaced, and every other task goes on. A reader of files
(``imap``'s ``failed``) makes such a failure the failure of the file the task was reading.
"""
from __future__ import annotations

import argparse
import gc
import multiprocessing
import os
import pickle
import signal
import sys
from collections import deque
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Iterable, Iterator, Optional, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# What a worker that fails its task says, past which a long message is cut (an exception's text).
WHY_CHARS = 300
# A task whose worker died is given to a new worker this many more times (``submit``'s ``retries``).
RETRIES = 1
# Tasks a worker holds at once: the one it works on and the next, waiting in its pipe, so that it goes on
# to the next as soon as it has sent an answer, instead of idling until this process has taken the answer
# (unpickled a whole log) and sent it another. Only a small task is sent ahead (a file to read): one that
# fills the pipe could block this process while the worker blocks sending it an answer.
HELD = 2
AHEAD_BYTES = 8192


# The cyclic garbage collector's thresholds in a tool that reads hundreds of logs (``collect_less``): a
# collection after this many new containers (Python's default 700), and of the older generations after
# this many of the younger one's (default 10, 10).
COLLECT_AFTER = (100_000, 50, 100)


def collect_less() -> None:
    """Fewer garbage collections in this process (``COLLECT_AFTER``). A tool reads hundreds of MB of small
    dicts and lists that all live until it ends: at Python's thresholds the collector runs after every 700 of
    them and every so often walks the whole heap, for nothing (a log's events hold no cycles); about a
    tenth of the report's CPU at 750 logs. Cycles are still collected, later; what is computed is the same."""
    gc.set_threshold(*COLLECT_AFTER)


class WorkerFailed(Exception):
    """A task that no answer came back for: its worker died, was killed, or could not send its answer."""


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


def _cut(text: str) -> str:
    return text if len(text) <= WHY_CHARS else text[:WHY_CHARS] + "..."


def _serve(conn: Connection, parent: int) -> None:
    """A worker's life: take a task, answer it, until told to stop or this process's parent is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the tool's to handle: it stops the workers
    collect_less()  # a worker reads logs too (and, spawned, does not inherit the tool's thresholds)
    while True:
        while not conn.poll(1.0):
            if os.getppid() != parent:  # the tool is gone (killed): nobody will ask anything again
                return
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        if not data:
            return
        fn, args = pickle.loads(data)
        try:
            answer: tuple[str, Any] = ("ok", fn(*args))
        except Exception as exc:  # the task's own error: raised again where it was asked (as in one process)
            answer = ("raise", exc)
        try:
            reply = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # too deep, or not picklable: the task fails, the worker lives on
            reply = pickle.dumps(("failed", _cut(f"its answer could not be sent back ({type(exc).__name__}: {exc})")))
        try:
            conn.send_bytes(reply)
        except OSError:
            return


class _Worker:
    def __init__(self, context: Any) -> None:
        here, there = context.Pipe(duplex=True)
        self.process = context.Process(target=_serve, args=(there, os.getpid()), daemon=True)
        self.process.start()
        there.close()
        self.conn: Connection = here
        # the tasks sent to it, in the order sent (and answered): the first is the one it works on
        self.tasks: deque[int] = deque()

    def stop(self, kill: bool) -> None:
        if kill or self.tasks:
            self.process.kill()
        else:
            try:
                self.conn.send_bytes(b"")
            except OSError:
                pass
        self.process.join()
        self.conn.close()


def _death(process: Any) -> str:
    code = process.exitcode
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


class _Task:
    """What ``Workers.submit`` gives: ``get()`` waits for the answer (and raises the task's error,
    or ``WorkerFailed``)."""

    def __init__(self, workers: "Workers", index: int) -> None:
        self._workers, self._index = workers, index
        self._answer: Optional[tuple[str, Any]] = None

    def get(self) -> Any:
        if self._answer is None:
            self._answer = self._workers._answer(self._index)
        kind, value = self._answer
        if kind == "ok":
            return value
        if kind == "raise":
            raise value
        raise WorkerFailed(value)


class _Done:
    """What ``Workers.submit`` gives in one process: the answer, computed at once."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.value = fn(*args)

    def get(self) -> Any:
        return self.value


class Workers:
    """``n`` worker processes (``n`` <= 1: none, the work runs here), as a context manager.

    The processes are forked where the platform forks safely (Linux), else spawned; they are
    started when the pool is entered (and again, one for one, in place of one that died) and stopped
    when it is left."""

    def __init__(self, n: Optional[int] = 1) -> None:
        self.n = default_workers() if n is None else max(1, min(int(n), default_workers()))
        self._context: Any = None
        self._workers: list[_Worker] = []
        self._queue: deque[int] = deque()  # tasks not yet given to a worker, in the order asked
        self._payloads: dict[int, bytes] = {}  # task -> its pickled (fn, args), until it is answered
        self._tries: dict[int, int] = {}  # task -> the workers it may still be given to after this one
        self._answers: dict[int, tuple[str, Any]] = {}
        self._next = 0

    def __enter__(self) -> "Workers":
        if self.n > 1:
            methods = multiprocessing.get_all_start_methods()
            method = "fork" if sys.platform.startswith("linux") and "fork" in methods else "spawn"
            self._context = multiprocessing.get_context(method)
            self._workers = [_Worker(self._context) for _ in range(self.n)]
        return self

    def __exit__(self, *exc: Any) -> None:
        for worker in self._workers:
            worker.stop(kill=exc[0] is not None)
        self._workers, self._context = [], None
        self._queue.clear()
        self._payloads.clear()

    def imap(self, fn: Callable[[T], R], items: Iterable[T],
             failed: Optional[Callable[[T, str], R]] = None) -> Iterator[R]:
        """``fn`` of each item, in the items' order, as each is ready (``fn``: a module's function, or a
        ``functools.partial`` of one, so that it reaches another process). ``failed(item, why)``: what
        stands for an item whose worker died or could not send its answer back (without it, such an
        item raises ``WorkerFailed``); it is not tried again, so the item that failed is the one named."""
        if self._context is None:
            return map(fn, items)
        items = list(items)
        tasks = [self.submit(fn, item, retries=0) for item in items]

        def answers() -> Iterator[R]:
            for item, task in zip(items, tasks):
                try:
                    yield task.get()
                except WorkerFailed as exc:
                    if failed is None:
                        raise
                    yield failed(item, str(exc))
        return answers()

    def submit(self, fn: Callable[..., R], *args: Any, retries: int = RETRIES) -> Any:
        """Start ``fn(*args)``; the answer is the returned object's ``get()``. A task whose worker dies is
        given to a new worker ``retries`` more times (work that is no one file's: a plot, a column)."""
        if self._context is None:
            return _Done(fn, args)
        index, self._next = self._next, self._next + 1
        self._payloads[index] = pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)
        self._tries[index] = retries
        self._queue.append(index)
        self._dispatch()
        return _Task(self, index)

    def _answer(self, index: int) -> tuple[str, Any]:
        while index not in self._answers:
            self._step()
        return self._answers.pop(index)

    def _dispatch(self) -> None:
        """Give waiting tasks to workers that hold fewer than ``HELD``: first to the idle ones."""
        for held in range(HELD):
            for worker in list(self._workers):
                if not self._queue:
                    return
                if len(worker.tasks) == held:
                    if held and len(self._payloads[self._queue[0]]) > AHEAD_BYTES:
                        return
                    index = self._queue.popleft()
                    try:
                        worker.conn.send_bytes(self._payloads[index])
                    except OSError:  # it died: this task was not begun, so it goes to its successor
                        self._queue.appendleft(index)
                        self._replace(worker, died=bool(worker.tasks))
                    else:
                        worker.tasks.append(index)

    def _step(self) -> None:
        """Wait for one worker to answer or die, and take what it did."""
        self._dispatch()
        busy = [w for w in self._workers if w.tasks]
        if not busy:
            raise RuntimeError("a task was asked for that no worker holds")  # not reachable: every task is queued
        ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy]))
        for worker in busy:
            if worker.conn in ready or (worker.process.sentinel in ready and worker.conn.poll()):
                self._take(worker)
            elif worker.process.sentinel in ready:
                self._replace(worker, died=True)
        self._dispatch()

    def _take(self, worker: _Worker) -> None:
        index = worker.tasks[0]
        try:
            data = worker.conn.recv_bytes()
        except (EOFError, OSError):  # died while answering
            self._replace(worker, died=True)
            return
        worker.tasks.popleft()
        try:
            answer = pickle.loads(data)
        except Exception as exc:
            answer = ("failed", _cut(f"its answer could not be read back ({type(exc).__name__}: {exc})"))
        self._finish(index, answer)

    def _finish(self, index: int, answer: tuple[str, Any]) -> None:
        self._answers[index] = answer
        self._payloads.pop(index, None)
        self._tries.pop(index, None)

    def _replace(self, worker: _Worker, died: bool) -> None:
        """A worker that died: the task it worked on (``died``: begun) fails or, given tries left, goes to
        the next worker, and those it held but had not begun go back to the head of the queue, in their
        order; a new worker takes its place."""
        held = list(worker.tasks)
        worker.tasks.clear()
        index = held.pop(0) if held and died else None
        self._queue.extendleft(reversed(held))
        worker.process.join()
        worker.conn.close()
        why = f"the worker process reading it died ({_death(worker.process)})"
        if index is not None:
            if self._tries.get(index, 0) > 0:
                self._tries[index] -= 1
                self._queue.appendleft(index)
            else:
                self._finish(index, ("failed", why))
        self._workers[self._workers.index(worker)] = _Worker(self._context)
