"""The EconArena Score and its five parts (contract §7), from scored runs alone.

Everything here is a pure function of ``RunOutcome`` records, which is what makes a log
re-scorable: ``rescore_sessions`` turns the ``econarena_run`` events of a log back into the same
session metrics that the eval recorded. How they are keyed in the log is ``log.format``'s.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from ..core.outcome import RunOutcome, SeatOutcome
from ..games import get as get_game
from ..games import outcome_from_event

# Reported figures are rounded to 12 decimals: float noise (4.2 / 5 == 0.8400000000000001) would
# otherwise make equal scores print differently; no real difference is that small.
DECIMALS = 12
COMPONENTS = ("rationality", "ne_proximity", "win_rate", "rule_following", "convergence")
METRICS = ("eas",) + COMPONENTS


def distance_to_ne(seat: SeatOutcome, scale: float) -> float:
    """d in [0, 1]: how far the action is from the equilibrium action; a rule break is as far as it gets."""
    if not seat.valid or seat.action is None:
        return 1.0
    return min(1.0, abs(seat.action - seat.ne_action) / scale)


def payoff_ratio(seat: SeatOutcome) -> float:
    """Paper Eq. 1 for one seat, clipped at 1 so out-earning the equilibrium cannot hide other seats."""
    if seat.ne_payoff <= 0:  # not reachable with valid parameters; keep the metric defined
        return 1.0 if seat.payoff >= seat.ne_payoff else 0.0
    return min(1.0, seat.payoff / seat.ne_payoff)


def win_share(run: RunOutcome, seat: SeatOutcome) -> float:
    """The game says what winning means: a share of the prize, or the item."""
    return get_game(run.game).win_share(run, seat)


def _mean(xs: Sequence[float]) -> float:
    return math.fsum(xs) / len(xs)


def convergence_window(runs: int) -> int:
    return math.ceil(runs / 3)


def session_metrics(runs: Sequence[RunOutcome], player: str) -> Optional[dict[str, float]]:
    """The six metrics over ``player``'s (run, seat) pairs; ``runs`` in run order. None if it sat nowhere."""
    # one pass over the player's (run, seat) pairs, in run order: each part's terms, in the order a part
    # sums them; the convergence window's distances are the last of them (its runs are the last runs)
    ratios, distances, shares, valid = [], [], [], []
    late_from = len(runs) - convergence_window(len(runs))
    late_start = 0
    for i, r in enumerate(runs):
        if i == late_from:
            late_start = len(distances)
        share = get_game(r.game).win_share
        for s in r.seats:
            if s.player == player:
                ratios.append(payoff_ratio(s))
                distances.append(distance_to_ne(s, r.scale))
                shares.append(share(r, s))
                valid.append(1.0 if s.valid else 0.0)
    if not ratios:
        return None
    parts = {
        "rationality": _mean(ratios),
        "ne_proximity": 1.0 - _mean(distances),
        "win_rate": _mean(shares),
        "rule_following": _mean(valid),
        "convergence": 1.0 - _mean(distances[late_start:]),
    }
    eas = _mean([parts[k] for k in COMPONENTS])
    return {k: round(v, DECIMALS) for k, v in {"eas": eas, **parts}.items()}


def mean_metrics(
    finished: Sequence[Mapping[str, Mapping[str, float]]],
    players: Sequence[str],
) -> dict[str, dict[str, Optional[float]]]:
    """Each player's mean of each metric over the finished sessions it played (player -> metrics).

    With no such session a mean is None: there is nothing to average, and NaN is not JSON. How the
    log lays these out (``players[0]``'s under the metric's name) is ``log.format.final_report``.
    """
    out: dict[str, dict[str, Optional[float]]] = {}
    for player in players:
        out[player] = {}
        for metric in METRICS:
            values = [s[player][metric] for s in finished if player in s]
            out[player][metric] = round(_mean(values), DECIMALS) if values else None
    return out


def rescore_sessions(
    run_events: Iterable[Mapping[str, Any]],
    players: Sequence[str],
    sessions: Iterable[int] = (),
    outcome_of: Callable[[Mapping[str, Any]], RunOutcome] = outcome_from_event,
) -> dict[int, Optional[dict[str, dict[str, float]]]]:
    """Re-score a log's sessions from its ``econarena_run`` event data alone.

    A session counts as finished when all of its ``runs`` runs are in the log. ``sessions`` names
    sessions that may have no run in the log at all (they errored before their first run ended).
    Returns the per-session metrics (None for an unfinished session); ``log.evallog.rescore_events``
    adds the final report they make. ``outcome_of``: an event's outcome (``outcome_from_event``, or
    the one a reader made of it already).
    """

    by_session: dict[int, dict[int, Mapping[str, Any]]] = defaultdict(dict)
    for ev in run_events:
        by_session[int(ev["session"])][int(ev["run"])] = ev
    per_session: dict[int, Optional[dict[str, dict[str, float]]]] = {s: None for s in sessions}
    for session, runs in sorted(by_session.items()):
        expected = int(next(iter(runs.values()))["runs"])
        if sorted(runs) != list(range(expected)):
            per_session[session] = None
            continue
        outcomes = [outcome_of(runs[i]) for i in range(expected)]
        metrics = {p: m for p in players if (m := session_metrics(outcomes, p)) is not None}
        per_session[session] = metrics
    return per_session
