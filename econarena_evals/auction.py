"""How a second-price sealed-bid auction run is scored (SPEC section 4).

Each seat knows only its private value v and its assets A. The highest valid bid wins (ties go
to the lowest seat) and pays the second-highest valid bid. An invalid bid pays the entrance fee
and takes no part. Equilibrium: bid your value.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

from .outcome import RunOutcome, SeatOutcome, finite_or_none


def is_valid_bid(bid: Optional[float], assets: float) -> bool:
    return bid is not None and math.isfinite(bid) and 0.0 <= bid <= assets


def _winner_and_price(bids: Sequence[tuple[int, float]]) -> tuple[Optional[int], Optional[float]]:
    """``bids`` are (seat, amount) of the valid bidders. Highest wins, lowest seat breaks ties."""
    if not bids:
        return None, None
    ranked = sorted(bids, key=lambda sb: (-sb[1], sb[0]))
    price = ranked[1][1] if len(ranked) > 1 else 0.0
    return ranked[0][0], price


def ne_payoffs(values: Sequence[float], assets: float) -> list[float]:
    """Payoff of each seat if every seat bid truthfully: the top value wins and pays the second."""
    winner, price = _winner_and_price([(i + 1, float(v)) for i, v in enumerate(values)])
    return [
        assets - price + float(v) if (i + 1) == winner else float(assets)  # type: ignore[operator]
        for i, v in enumerate(values)
    ]


def score_run(
    bids: Sequence[Optional[float]],
    values: Sequence[float],
    assets: float,
    fee: float,
    players: Sequence[str],
) -> RunOutcome:
    """Score one run. ``bids[i]`` is seat i+1's parsed bid, None for an unparseable answer."""
    if not (len(bids) == len(values) == len(players)):
        raise ValueError(f"{len(bids)} bids, {len(values)} values, {len(players)} seats")
    valid = [is_valid_bid(b, assets) for b in bids]
    winner, price = _winner_and_price([(i + 1, float(b)) for i, (b, ok) in enumerate(zip(bids, valid)) if ok])
    eq = ne_payoffs(values, assets)

    def payoff(i: int) -> float:
        if not valid[i]:
            return float(assets) - fee
        if (i + 1) == winner:
            return float(assets) - price + float(values[i])  # type: ignore[operator]
        return float(assets)

    seats = tuple(
        SeatOutcome(
            seat=i + 1,
            player=players[i],
            action=finite_or_none(b),
            valid=valid[i],
            payoff=payoff(i),
            ne_action=float(values[i]),
            ne_payoff=eq[i],
        )
        for i, b in enumerate(bids)
    )
    return RunOutcome(
        game="auction",
        scale=float(assets),
        prize=0.0,
        seats=seats,
        winners=() if winner is None else (winner,),
        price=price,
    )
