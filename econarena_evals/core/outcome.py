"""Plain data for one scored run: what each seat did and got, and what equilibrium play would give.

These records are the single currency between the game rules (``games/``), the metrics
(``metrics``) and the log (``econarena_run`` events): a game's ``event_result`` writes what its
``outcome_from_event`` reads back, so any log can be re-scored without the eval.
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
    """A scored run; each game's ``Outcome`` adds what its rules give besides payoffs and winners."""

    game: str  # a name in ``games.GAMES``
    scale: float  # the top of the valid range: the unit of distance to equilibrium
    seats: tuple[SeatOutcome, ...]
    winners: tuple[int, ...]

    def won(self, seat: int) -> bool:
        return seat in self.winners


def finite_or_none(x: Optional[float]) -> Optional[float]:
    """JSON has no NaN or infinity: the log stores such an action as null."""
    if x is None or not math.isfinite(x):
        return None
    return float(x)
