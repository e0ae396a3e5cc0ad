"""Intervals worked out ahead by the worker processes (``compute.work_out_intervals``) are the intervals
``metric_interval`` works out itself: the same draws, whichever process made them, and each kept once."""
from __future__ import annotations

import random

from econarena_evals.report.compute import work_out_intervals
from econarena_evals.report.workers import Workers
from econarena_evals.score import intervals
from econarena_evals.score.intervals import bootstrap_ci, metric_interval, rng_for


def _asked() -> list[tuple[list[float], str, str, str]]:
    rng = random.Random(7)
    return [([rng.random() for _ in range(rng.randint(2, 30))], f"cell_{i % 5}", f"model-{i:02d}", metric)
            for i in range(40) for metric in ("eas", "win_rate")]


def test_intervals_worked_out_in_workers_are_the_ones_worked_out_here():
    asked = _asked()
    here = [bootstrap_ci(values, rng_for(column, player, metric)) for values, column, player, metric in asked]
    intervals._known.clear()
    with Workers(2) as workers:
        work_out_intervals(asked + [([0.5], "cell_0", "model-00", "eas")], workers)  # one value: nothing to resample
    assert len(intervals._known) == len(asked)  # every interval of two values or more, from the workers
    assert [metric_interval(*a) for a in asked] == here
    assert metric_interval([0.5], "cell_0", "model-00", "eas") == (0.5, 0.5)
    intervals._known.clear()


def test_an_interval_asked_twice_is_worked_out_once_and_is_the_same():
    intervals._known.clear()
    values, column, player, metric = _asked()[0]
    first = metric_interval(values, column, player, metric)
    assert len(intervals._known) == 1
    assert metric_interval(list(values), column, player, metric) == first == bootstrap_ci(
        values, rng_for(column, player, metric))
    assert len(intervals._known) == 1
    intervals._known.clear()
