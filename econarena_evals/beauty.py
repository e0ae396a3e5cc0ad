"""How a Keynesian beauty-contest run is scored (SPEC section 3).

Every seat picks a number in [0, c_bar]. The target is 2/3 of the mean of the *valid* choices;
the valid seats closest to it share the prize. Equilibrium: everyone picks 0, everyone ties.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

from .outcome import RunOutcome, SeatOutcome, finite_or_none

TARGET_RATIO = 2 / 3
# Distances this close (relative to c_bar) are one tie: a float mean must not split real ties.
TIE_TOLERANCE = 1e-9


def is_valid_choice(choice: Optional[float], c_bar: float) -> bool:
    return choice is not None and math.isfinite(choice) and 0.0 <= choice <= c_bar


def target_of(valid_choices: Sequence[float]) -> Optional[float]:
    if not valid_choices:
        return None
    return TARGET_RATIO * math.fsum(valid_choices) / len(valid_choices)


def ne_payoff(prize: float, n_seats: int) -> float:
    """At the equilibrium all seats pick 0 and split the prize."""
    return prize / n_seats


def score_run(
    choices: Sequence[Optional[float]],
    c_bar: float,
    prize: float,
    players: Sequence[str],
) -> RunOutcome:
    """Score one run. ``choices[i]`` is seat i+1's parsed number, None for an unparseable answer."""
    if len(choices) != len(players):
        raise ValueError(f"{len(choices)} choices for {len(players)} seats")
    valid = [is_valid_choice(c, c_bar) for c in choices]
    valid_choices = [float(c) for c, ok in zip(choices, valid) if ok]
    target = target_of(valid_choices)

    winners: tuple[int, ...] = ()
    if target is not None:
        distances = {i: abs(float(c) - target) for i, (c, ok) in enumerate(zip(choices, valid)) if ok}
        best = min(distances.values())
        tolerance = TIE_TOLERANCE * c_bar
        winners = tuple(i + 1 for i, d in distances.items() if d - best <= tolerance)

    share = prize / len(winners) if winners else 0.0
    eq_payoff = ne_payoff(prize, len(choices))
    seats = tuple(
        SeatOutcome(
            seat=i + 1,
            player=players[i],
            action=finite_or_none(c),
            valid=ok,
            payoff=share if (i + 1) in winners else 0.0,
            ne_action=0.0,
            ne_payoff=eq_payoff,
        )
        for i, (c, ok) in enumerate(zip(choices, valid))
    )
    return RunOutcome(
        game="beauty", scale=float(c_bar), prize=float(prize), seats=seats, winners=winners, target=target
    )
