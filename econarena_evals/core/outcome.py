"""Plain data for one scored run: what each seat did and got, and what equilibrium play would give.

These records are the single currency between the game rules (``games/``), the metrics
(``metrics``) and the log (``econarena_run`` events): a game's ``event_result`` writes what its
``outcome_from_event`` reads back, so any log can be re-scored without the eval.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

# The numbers a run event holds, bounded once for the eval that writes them and the reader that
# takes them back (``log.evallog``):
# - a game's own numbers (ranges, values, prizes, assets, fees, payoffs) stay within MAX_NUMBER: a
#   cell whose parameters pass it is refused before any call (``games.check_cell``), and the reader
#   takes back every number within it; so sums of them stay finite;
# - a seat's action is the model's number as parsed, valid or not, and a rule break may be any
#   finite number (a real model wrote "choice": 5790624381138623): written as parsed, read back as
#   written. JSON writes and reads every finite float exactly.
MAX_NUMBER = 1e15


def game_number(x: Any) -> bool:
    """A number a game writes into a run event: finite and within ``MAX_NUMBER``."""
    return action_number(x) and abs(x) <= MAX_NUMBER


def action_number(x: Any) -> bool:
    """A seat's action as the eval writes it: any finite number (an int past float's range is not)."""
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


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
            "action": self.action if action_number(self.action) else None,  # what the reader takes back
            "valid": self.valid,
            "payoff": self.payoff,
            "ne_action": self.ne_action,
            "ne_payoff": self.ne_payoff,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "SeatOutcome":
        action = d["action"]
        seat = object.__new__(cls)
        # the fields set as a frozen dataclass's __init__ sets them (it has no __post_init__), without its
        # object.__setattr__ call per field: a report reads every seat of every run of hundreds of logs
        seat.__dict__.update(
            seat=int(d["seat"]),
            player=str(d["player"]),
            action=None if action is None else float(action),
            valid=bool(d["valid"]),
            payoff=float(d["payoff"]),
            ne_action=float(d["ne_action"]),
            ne_payoff=float(d["ne_payoff"]),
        )
        return seat


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
