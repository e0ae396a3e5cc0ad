"""Plain data for one scored run: what each seat did and got, and what equilibrium play would give.

These records are the single currency between the game rules (``beauty``, ``auction``), the metrics
(``metrics``) and the log (``econarena_run`` events): ``RunOutcome.to_event`` writes exactly what
``RunOutcome.from_event`` reads back, so any log can be re-scored without the eval.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class SeatOutcome:
    seat: int  # 1-based, as the prompt tells the seat
    player: str
    action: Optional[float]  # the parsed number; None when the answer held no finite number
    valid: bool
    payoff: float
    ne_action: float
    ne_payoff: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "player": self.player,
            "action": self.action,
            "valid": self.valid,
            "payoff": self.payoff,
            "ne_action": self.ne_action,
            "ne_payoff": self.ne_payoff,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "SeatOutcome":
        action = d["action"]
        return cls(
            seat=int(d["seat"]),
            player=str(d["player"]),
            action=None if action is None else float(action),
            valid=bool(d["valid"]),
            payoff=float(d["payoff"]),
            ne_action=float(d["ne_action"]),
            ne_payoff=float(d["ne_payoff"]),
        )


@dataclass(frozen=True)
class RunOutcome:
    game: str  # "beauty" | "auction"
    scale: float  # c_bar (beauty) or assets (auction): the unit of distance to equilibrium
    prize: float  # beauty: x; auction: unused (0)
    seats: tuple[SeatOutcome, ...]
    winners: tuple[int, ...]
    target: Optional[float] = None  # beauty only
    price: Optional[float] = None  # auction only

    def won(self, seat: int) -> bool:
        return seat in self.winners


def finite_or_none(x: Optional[float]) -> Optional[float]:
    """JSON has no NaN or infinity: the log stores such an action as null."""
    if x is None or not math.isfinite(x):
        return None
    return float(x)


def run_event(outcome: RunOutcome, *, cell: str, session: int, run: int, runs: int, history_runs: int,
              game_params: dict[str, Any]) -> dict[str, Any]:
    """The ``econarena_run`` event (SPEC section 8). ``game_params``: c_bar and prize, or assets, fee, values."""
    event: dict[str, Any] = {
        "cell": cell,
        "session": session,
        "run": run,
        "runs": runs,
        "game": outcome.game,
        **game_params,
        "history_runs": history_runs,
        "winners": list(outcome.winners),
        "seats": [s.to_dict() for s in outcome.seats],
    }
    if outcome.game == "beauty":
        event["target"] = outcome.target
    else:
        event["price"] = outcome.price
    return event


def outcome_from_event(event: dict[str, Any]) -> RunOutcome:
    """Inverse of ``run_event``: the scored run as the log holds it."""
    beauty = event["game"] == "beauty"
    return RunOutcome(
        game=event["game"],
        scale=float(event["c_bar"] if beauty else event["assets"]),
        prize=float(event["prize"]) if beauty else 0.0,
        seats=tuple(SeatOutcome.from_dict(s) for s in event["seats"]),
        winners=tuple(int(w) for w in event["winners"]),
        target=event.get("target"),
        price=event.get("price"),
    )
