"""The games, one module each, found through one registry.

Every module here satisfies ``protocol.Game``: it holds everything specific to its game (session
drawing, prompt and history text, reading its prompt back, scoring, the equilibrium, the reference
players, the report's labels). The rest of the package looks a game up by the ``game`` eval arg or
the ``game`` field of a run event and never branches on its name. To add a game, write its module,
list it in ``GAMES``, and give it registry YAML and samples (docs/architecture.md).
"""
from __future__ import annotations

from types import ModuleType

from . import beauty, first_price, second_price
from .protocol import MEMBERS, Game, ReportLabels

GAMES: dict[str, ModuleType] = {m.NAME: m for m in (beauty, second_price, first_price)}

__all__ = ["GAMES", "Game", "MEMBERS", "ReportLabels", "get"]


def get(name: str) -> Game:
    """The game module of a ``game`` name; ValueError naming the known ones for any other name."""
    try:
        return GAMES[name]  # type: ignore[return-value]
    except KeyError:
        raise ValueError(f"game must be one of {tuple(GAMES)}, got {name!r}") from None
