"""95 % bootstrap intervals over sessions, shared by ``econarena-report`` and ``econarena-summary``.

Each interval draws from its own generator, seeded by what it is the interval of (column, player,
metric), so a figure's interval is the same whichever other logs a report or summary reads, and the
terminal table shows exactly the report's intervals.
"""
from __future__ import annotations

import math
import random
from typing import Sequence

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 1995


def rng_for(*what: object) -> random.Random:
    """The generator of one interval, named by what it is of."""
    return random.Random(":".join([str(BOOTSTRAP_SEED), *map(str, what)]))


def bootstrap_ci(values: Sequence[float], rng: random.Random) -> tuple[float, float]:
    """95 % percentile interval of the mean, resampling sessions."""
    if len(values) < 2:
        return (values[0], values[0]) if values else (math.nan, math.nan)
    n = len(values)
    means = sorted(math.fsum(rng.choices(values, k=n)) / n for _ in range(BOOTSTRAP_RESAMPLES))
    return means[int(0.025 * BOOTSTRAP_RESAMPLES)], means[int(0.975 * BOOTSTRAP_RESAMPLES) - 1]


def stratified_ci(groups: Sequence[Sequence[float]], rng: random.Random) -> tuple[float, float]:
    """95 % interval of the mean of group means, resampling sessions within each group."""
    groups = [g for g in groups if g]
    if not groups:
        return (math.nan, math.nan)
    stats = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        stats.append(math.fsum(math.fsum(rng.choices(g, k=len(g))) / len(g) for g in groups) / len(groups))
    stats.sort()
    return stats[int(0.025 * BOOTSTRAP_RESAMPLES)], stats[int(0.975 * BOOTSTRAP_RESAMPLES) - 1]


def metric_interval(values: Sequence[float], column: str, player: str, metric: str) -> tuple[float, float]:
    """The interval of one metric of one player in one column."""
    return bootstrap_ci(values, rng_for(column, player, metric))
