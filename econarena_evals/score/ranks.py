"""Rank intervals for a leaderboard: which ranks the data can tell apart.

A model's score is the mean over columns of its mean EAS over the sessions it finished there (the
report's *overall* figure). Its rank is 1 + the number of models that score strictly more, so models
with equal scores share a rank. To see how sure a rank is, the sessions are resampled as the
leaderboards of the chatbot arena resample battles, and every model is ranked again in each resample:

- one resample draws, in every column, the column's sessions with replacement (``BOOTSTRAP_RESAMPLES``
  draws of as many sessions as the column has), the same draw for every model of the column: the
  models of a column played the same instances, so their figures go up and down together;
- a model's mean in a column of the resample is the mean of its figures weighted by how often each
  of its sessions was drawn (a session it did not finish does not count; a resample that drew none of
  its sessions keeps its mean over all of them), and its score is the mean over its columns;
- its rank interval is the 2.5 % and 97.5 % order statistics of its ranks over the resamples (as
  ``intervals.bootstrap_ci`` reads the resampled means).

Two models whose rank intervals do not overlap are told apart by the data; where they overlap, the
order between them could be the draw of the sessions. Memory: one (resamples × models) array per
column and for the sum, never models × models.
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from .intervals import BOOTSTRAP_RESAMPLES, rng_for

_LOW, _HIGH = int(0.025 * BOOTSTRAP_RESAMPLES), int(0.975 * BOOTSTRAP_RESAMPLES) - 1

PerColumn = Mapping[str, Mapping[str, Mapping[int, float]]]  # column -> player -> session -> figure


def competition_ranks(scores: np.ndarray) -> np.ndarray:
    """1 + the number of strictly greater scores, along the last axis (ties share a rank)."""
    scores = np.asarray(scores, dtype=float)
    flat = scores.reshape(-1, scores.shape[-1])
    ordered = np.sort(flat, axis=1)
    out = np.empty(flat.shape, dtype=np.int64)
    n = flat.shape[1]
    for i in range(flat.shape[0]):
        out[i] = n - np.searchsorted(ordered[i], flat[i], side="right") + 1
    return out.reshape(scores.shape)


def rank_intervals(per_column: PerColumn, *what: object) -> dict[str, dict[str, float]]:
    """{player: {score, rank, rank_low, rank_high, columns}} for every player with a figure in
    ``per_column``; ``what`` names the leaderboard (its draws are seeded by it, ``rng_for``)."""
    players = sorted({p for by_player in per_column.values() for p, s in by_player.items() if s})
    if not players:
        return {}
    where = {p: i for i, p in enumerate(players)}
    rng = rng_for("ranks", *what)
    total = np.zeros((BOOTSTRAP_RESAMPLES, len(players)))
    column_means: dict[str, list[float]] = {p: [] for p in players}
    columns = np.zeros(len(players))
    for column in sorted(per_column):
        by_player = {p: s for p, s in per_column[column].items() if s}
        if not by_player:
            continue
        sessions = sorted({s for figures in by_player.values() for s in figures})
        index = {s: j for j, s in enumerate(sessions)}
        n = len(sessions)
        draws = rng.integers(0, n, size=(BOOTSTRAP_RESAMPLES, n))
        counts = np.zeros((BOOTSTRAP_RESAMPLES, n))
        np.add.at(counts, (np.arange(BOOTSTRAP_RESAMPLES)[:, None], draws), 1.0)
        names = sorted(by_player)
        values = np.zeros((n, len(names)))
        present = np.zeros((n, len(names)))
        means = np.empty(len(names))
        for k, p in enumerate(names):
            figures = by_player[p]
            for s, v in figures.items():
                values[index[s], k] = v
                present[index[s], k] = 1.0
            means[k] = math.fsum(figures.values()) / len(figures)
        weight = counts @ present  # (R, players of the column)
        drawn = np.where(weight > 0, (counts @ values) / np.maximum(weight, 1.0), means[None, :])
        cols = [where[p] for p in names]
        total[:, cols] += drawn
        for k, p in enumerate(names):
            column_means[p].append(float(means[k]))
        columns[cols] += 1
    scores = total / columns[None, :]
    ranks = np.sort(competition_ranks(scores), axis=0)
    own = np.array([math.fsum(column_means[p]) / len(column_means[p]) for p in players])  # as the overall figure
    point_ranks = competition_ranks(own[None, :])[0]
    return {p: {"score": float(own[i]), "rank": int(point_ranks[i]), "rank_low": int(ranks[_LOW, i]),
                "rank_high": int(ranks[_HIGH, i]), "columns": int(columns[i])} for i, p in enumerate(players)}
