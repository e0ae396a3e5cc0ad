"""A worker holds two tasks at once (the one it works on and the next, ``workers.HELD``): when it dies on
the first, only that one fails, and the one it held but had not begun is answered by its successor."""
from __future__ import annotations

import os
import signal
import time

from econarena_evals.report import workers as pool


def _square_or_die(x: int) -> int:
    if x == 3:
        time.sleep(0.5)  # long enough for the next task to be sent to this worker ahead: it holds two
        os.kill(os.getpid(), signal.SIGKILL)
    return x * x


def test_a_worker_that_dies_fails_only_the_task_it_worked_on():
    with pool.Workers(2) as workers:
        assert workers.n == 2 and pool.HELD == 2
        answers = list(workers.imap(_square_or_die, range(12), failed=lambda x, why: f"{x}: {why}"))
    assert answers[:3] == [0, 1, 4] and answers[4:] == [x * x for x in range(4, 12)]
    assert answers[3].startswith("3: the worker process reading it died (killed by SIGKILL)")


def test_tasks_too_big_to_send_ahead_wait_for_an_idle_worker():
    big = "x" * (pool.AHEAD_BYTES * 2)
    with pool.Workers(2) as workers:
        tasks = [workers.submit(len, big + str(i)) for i in range(6)]
        assert all(len(w.tasks) <= 1 for w in workers._workers)  # none was sent ahead
        assert [t.get() for t in tasks] == [len(big) + 1] * 6
