"""95 % bootstrap intervals over sessions, shared by ``econarena-report`` and ``econarena-summary``.

Each interval draws from its own generator, seeded by what it is the interval of (column, player,
metric), so a figure's interval is the same whichever other logs a report or summary reads, and the
terminal table shows exactly the report's intervals. The resamples are drawn as one numpy array: a
report of 120 logs asks for hundreds of intervals of 2000 resamples each.
"""
from __future__ import annotations

import hashlib
import math
from typing import Sequence

import numpy as np

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 1995
_LOW, _HIGH = int(0.025 * BOOTSTRAP_RESAMPLES), int(0.975 * BOOTSTRAP_RESAMPLES) - 1


def rng_for(*what: object) -> np.random.Generator:
    """The generator of one interval, named by what it is of."""
    # backslashreplace: a lone surrogate in a name is a name, not a crash (valid text encodes as before)
    name = ":".join([str(BOOTSTRAP_SEED), *map(str, what)]).encode("utf-8", "backslashreplace")
    return np.random.default_rng(int.from_bytes(hashlib.sha256(name).digest()[:8], "big"))


def _resampled_means(values: Sequence[float], rng: np.random.Generator) -> np.ndarray:
    # sorted first: sessions reach the log in the order threads finish them, and an interval must
    # not depend on that order (the same run twice gives the same interval)
    x = np.sort(np.asarray(values, dtype=float))
    return x[rng.integers(0, len(x), size=(BOOTSTRAP_RESAMPLES, len(x)))].mean(axis=1)


def bootstrap_ci(values: Sequence[float], rng: np.random.Generator) -> tuple[float, float]:
    """95 % percentile interval of the mean, resampling sessions."""
    if len(values) < 2:
        return (values[0], values[0]) if values else (math.nan, math.nan)
    means = np.sort(_resampled_means(values, rng))
    return float(means[_LOW]), float(means[_HIGH])


def stratified_ci(groups: Sequence[Sequence[float]], rng: np.random.Generator) -> tuple[float, float]:
    """95 % interval of the mean of group means, resampling sessions within each group."""
    groups = [g for g in groups if g]
    if not groups:
        return (math.nan, math.nan)
    stats = np.sort(np.mean([_resampled_means(g, rng) for g in groups], axis=0))
    return float(stats[_LOW]), float(stats[_HIGH])


# Intervals worked out already: here, or ahead in worker processes (``metric_intervals``, ``remember``). The
# same arguments give the same interval, so ``metric_interval`` answers from here (the report asks for a
# row's EAS interval twice: the leaderboard's cell and the row's). Bounded: cleared past KNOWN_MAX.
KNOWN_MAX = 200_000
_known: dict[tuple[tuple[float, ...], str, str, str], tuple[float, float]] = {}


def _key(values: Sequence[float], column: str, player: str, metric: str) -> tuple[tuple[float, ...], str, str, str]:
    return tuple(values), column, player, metric


def metric_interval(values: Sequence[float], column: str, player: str, metric: str) -> tuple[float, float]:
    """The interval of one metric of one player in one column."""
    if len(values) < 2:  # no resampling: the value itself is the answer
        return bootstrap_ci(values, rng_for(column, player, metric))
    key = _key(values, column, player, metric)
    known = _known.get(key)
    if known is None:
        known = bootstrap_ci(values, rng_for(column, player, metric))
        remember([(values, column, player, metric)], [known])
    return known


def is_known(values: Sequence[float], column: str, player: str, metric: str) -> bool:
    """Whether ``metric_interval`` of these arguments is kept already (worked out here or remembered)."""
    return len(values) >= 2 and _key(values, column, player, metric) in _known


IntervalOf = tuple[Sequence[float], str, str, str]  # (values, column, player, metric): ``metric_interval``'s arguments


def metric_intervals(asked: Sequence[IntervalOf]) -> list[tuple[float, float]]:
    """``metric_interval`` of each of ``asked``: a batch that a worker process works out."""
    return [metric_interval(*a) for a in asked]


def remember(asked: Sequence[IntervalOf], answers: Sequence[tuple[float, float]]) -> None:
    """Keep intervals worked out elsewhere (``metric_intervals`` in a worker), for ``metric_interval``."""
    if len(_known) + len(asked) > KNOWN_MAX:
        _known.clear()
    for a, answer in zip(asked, answers):
        if len(a[0]) >= 2:
            _known[_key(*a)] = answer
