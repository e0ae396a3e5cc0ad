"""The tools' processes collect garbage less often (``workers.collect_less``): a worker sets the thresholds
itself, however it was started, and the report is the same as with Python's."""
from __future__ import annotations

import gc

from econarena_evals.report import workers as pool


def _thresholds(_: int) -> tuple[int, ...]:
    return gc.get_threshold()


def test_a_worker_collects_less_whatever_its_parent_does():
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with pool.Workers(2) as workers:
            if workers.n < 2:  # one core: no worker process to ask
                return
            assert set(workers.imap(_thresholds, range(4))) == {pool.COLLECT_AFTER}
        assert gc.get_threshold() == (700, 10, 10)  # the pool leaves this process's own as they were
    finally:
        gc.set_threshold(*before)


def test_collect_less_sets_the_thresholds_and_still_collects():
    before = gc.get_threshold()
    try:
        pool.collect_less()
        assert gc.get_threshold() == pool.COLLECT_AFTER and gc.isenabled()
    finally:
        gc.set_threshold(*before)
