"""The arena's rating: every player of a melee rated from the tables it sat at, with intervals.

The model is Plackett-Luce over each run's ranking by payoff (docs/arena.md says why): player ``i``
has a strength ``w_i``, and a run's seats are ranked by what they earned, best first, as if drawn one
after the other from those not yet drawn, each with chance ``w_i / Σ w`` of the remaining. Seats that
earn the same are tied: each of them is drawn from the same remaining set (Breslow's rule for ties),
and the last group (in a beauty contest, every seat that did not win) adds nothing. A player's
**rating** is ``log w_i``, centred so the roster's mean is 0; two ratings ``r_i``, ``r_j`` say that
``i`` earns more than ``j`` in a run they share with odds ``exp(r_i - r_j)`` (in Plackett-Luce the
pair's order has exactly that chance, whoever else sits at the table).

The fit is Hunter's (2004) MM algorithm with one win and one loss against a phantom player of
strength 1 for each player (a weak prior that keeps a player who never earned most finite). The
intervals resample **tables** (a table's runs share a session and its seats, so they are not
independent): ``ARENA_RESAMPLES`` draws of as many tables, the rating fitted again in each, all draws
at once as columns of one array; a rating's 95 % interval and its rank interval are the 2.5 % and
97.5 % order statistics (as ``ranks.rank_intervals`` reads ranks). Seeded by what they rate
(``intervals.rng_for``): the same logs give the same intervals.

The head-to-head table counts, for each pair, the runs in which both sat at one table and which of
the two earned more. Pure numpy; nothing here reads a file.
"""
from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..core.schedule import schedule
from ..core.sessions import CellConfig
from ..games import draw_session
from .intervals import rng_for
from .ranks import competition_ranks
from .table import Table, play_in_process

ARENA_RESAMPLES = 500  # resamples of the tables; each refits every strength (docs/arena.md: the cost)
MAX_ITERATIONS = 200
TOLERANCE = 1e-7  # the largest step of a log strength at which the fit stops
DECIMALS = 6  # payoffs equal to this many decimals are a tie

Run = Sequence[tuple[str, float]]  # (player, payoff) of each seat, in seat order
TableRuns = Sequence[Run]  # one table's runs


def tournament(players: Mapping[str, Any], cell: CellConfig, per_player: int, seed: int,
               cell_name: str = "melee") -> list[list[Run]]:
    """A melee played in this process by players that answer in it (``table.play_in_process``): the
    schedule seats the roster by name, as the eval does, and table ``k`` plays a session drawn with
    the seed. Each table's runs as (player, payoff) of each seat."""
    names = sorted(players)
    rng = random.Random(seed)
    out = []
    for k, seating in enumerate(schedule(len(names), cell.seats, per_player, seed).tables):
        table = Table(cell_name, cell, draw_session(rng, k, cell), [names[p] for p in seating], seed)
        play_in_process(table, players)
        out.append([[(s.player, s.payoff) for s in table.outcomes[r].seats] for r in range(cell.runs)])
    return out


def tables_of(run_events: Iterable[Mapping[str, Any]]) -> list[list[Run]]:
    """A melee log's ``econarena_run`` events as tables (by session, in session order) of runs (in
    run order), each run the (player, payoff) of its seats."""
    by_table: dict[int, dict[int, Run]] = defaultdict(dict)
    for event in run_events:
        by_table[int(event["session"])][int(event["run"])] = [
            (str(seat["player"]), float(seat["payoff"])) for seat in event["seats"]]
    return [[runs[r] for r in sorted(runs)] for _, runs in sorted(by_table.items())]


@dataclass(frozen=True)
class Rated:
    """One player's place in the arena of one cell."""

    player: str
    rating: float
    low: float  # the rating's 95 % interval
    high: float
    rank: int  # 1 + the players rated strictly higher
    rank_low: int  # the rank interval: best and worst rank in 95 % of the resamples
    rank_high: int
    mean_rank: float  # its mean rank over the resamples
    tables: int  # tables it sat at
    runs: int  # runs it played (a seat of a run; two seats of one run count once)


@dataclass(frozen=True)
class _Events:
    """Every choice of the model as rows: who was in the remaining set (``risk``, seats counted), who
    was drawn (``chosen``), how many (``size``), and the table it came from."""

    risk: np.ndarray  # (events, players)
    chosen: np.ndarray  # (events, players)
    size: np.ndarray  # (events,)
    table: np.ndarray  # (events,)


def _events(tables: Sequence[TableRuns], index: Mapping[str, int]) -> _Events:
    risk_rows, chosen_rows, sizes, where = [], [], [], []
    for t, runs in enumerate(tables):
        for run in runs:
            groups: dict[float, list[int]] = defaultdict(list)
            for player, payoff in run:
                groups[round(payoff, DECIMALS)].append(index[player])
            ordered = [groups[k] for k in sorted(groups, reverse=True)]
            remaining = np.zeros(len(index))
            for members in ordered:
                for p in members:
                    remaining[p] += 1
            for members in ordered[:-1]:
                chosen = np.zeros(len(index))
                for p in members:
                    chosen[p] += 1
                risk_rows.append(remaining.copy())
                chosen_rows.append(chosen)
                sizes.append(len(members))
                where.append(t)
                remaining -= chosen
    n = len(index)
    return _Events(np.array(risk_rows).reshape(-1, n), np.array(chosen_rows).reshape(-1, n),
                   np.array(sizes, dtype=float), np.array(where, dtype=np.int64))


def _gradient(events: _Events, w_events: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """The log-likelihood's gradient in the log strengths, (players, columns), the phantom's prior in."""
    # einsum, not BLAS: a BLAS of many threads on a busy machine is many times slower at these sizes
    strength = np.exp(theta)
    remaining = np.einsum("ep,pc->ec", events.risk, strength)  # (events, columns)
    drawn = np.einsum("ep,ec->pc", events.chosen, w_events)
    expected = strength * np.einsum("ep,ec->pc", events.risk, w_events * events.size[:, None] / remaining)
    return drawn - expected + 1.0 - 2.0 / (1.0 + np.exp(-theta))  # + the win and the loss against the phantom


def _information(events: _Events, theta: np.ndarray) -> np.ndarray:
    """Minus the Hessian of the log-likelihood at ``theta`` (players,), every table once."""
    strength = np.exp(theta)
    share = events.risk * strength[None, :] / (events.risk @ strength)[:, None]  # (events, players)
    sigma = 1.0 / (1.0 + np.exp(-theta))
    return (np.diag(events.size @ share) - (share * events.size[:, None]).T @ share
            + np.diag(2.0 * sigma * (1.0 - sigma)))


def _fit(events: _Events, weights: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
    """Log strengths (players, columns) for each column of table weights (tables, columns), each
    column centred to mean 0. Newton's steps from ``start`` (the log-likelihood is concave), the
    information taken once at the start for every column: the resamples' fits start at the full
    fit, where each resample's information is close to it."""
    players, columns = events.risk.shape[1], weights.shape[1]
    w_events = weights[events.table]  # (events, columns): how often each event's table was drawn
    theta = np.zeros((players, columns)) if start is None else np.repeat(start[:, None], columns, axis=1)
    inverse = np.linalg.inv(_information(events, theta[:, 0]))
    for step in range(MAX_ITERATIONS):
        if start is None and step:  # the full fit: the information at each step (one column)
            inverse = np.linalg.inv(_information(events, theta[:, 0]))
        move = np.einsum("pq,qc->pc", inverse, _gradient(events, w_events, theta))
        theta = theta + move
        if np.max(np.abs(move)) < TOLERANCE:
            break
    return theta - theta.mean(axis=0, keepdims=True)


def rate(tables: Sequence[TableRuns], *what: object, resamples: int = ARENA_RESAMPLES) -> list[Rated]:
    """Every player of these tables rated, best first (ties by name); ``what`` names the arena (the
    resamples are seeded by it)."""
    players = sorted({p for runs in tables for run in runs for p, _ in run})
    if not players or not tables:
        return []
    index = {p: i for i, p in enumerate(players)}
    events = _events(tables, index)
    point = _fit(events, np.ones((len(tables), 1)))[:, 0]
    rng = rng_for("arena", *what)
    draws = rng.integers(0, len(tables), size=(resamples, len(tables)))
    counts = np.zeros((len(tables), resamples))
    np.add.at(counts, (draws, np.arange(resamples)[:, None]), 1.0)
    fitted = _fit(events, counts, start=point)  # (players, resamples)
    boot = np.sort(fitted, axis=1)
    ranked = competition_ranks(fitted.T)  # (resamples, players)
    ranks = np.sort(ranked, axis=0)
    low, high = int(0.025 * resamples), int(0.975 * resamples) - 1
    point_ranks = competition_ranks(point[None, :])[0]
    sat = {p: set() for p in players}
    played = {p: 0 for p in players}
    for t, runs in enumerate(tables):
        for run in runs:
            for p in {p for p, _ in run}:
                sat[p].add(t)
                played[p] += 1
    out = [Rated(p, float(point[i]), float(boot[i, low]), float(boot[i, high]), int(point_ranks[i]),
                 int(ranks[low, i]), int(ranks[high, i]), float(ranked[:, i].mean()), len(sat[p]), played[p])
           for i, p in enumerate(players)]
    return sorted(out, key=lambda r: (-r.rating, r.player))


def head_to_head(tables: Sequence[TableRuns]) -> dict[tuple[str, str], tuple[int, int, int]]:
    """``(a, b)`` with a < b -> (runs both played at one table, runs a earned more, runs b earned more);
    a player with two seats of a run counts with its mean payoff there. Pairs that never met are left out."""
    out: dict[tuple[str, str], list[int]] = {}
    for runs in tables:
        for run in runs:
            payoffs: dict[str, list[float]] = defaultdict(list)
            for player, payoff in run:
                payoffs[player].append(payoff)
            mean = {p: round(sum(v) / len(v), DECIMALS) for p, v in payoffs.items()}
            names = sorted(mean)
            for i, a in enumerate(names):
                for b in names[i + 1:]:
                    row = out.setdefault((a, b), [0, 0, 0])
                    row[0] += 1
                    row[1] += mean[a] > mean[b]
                    row[2] += mean[b] > mean[a]
    return {pair: (row[0], row[1], row[2]) for pair, row in out.items()}
