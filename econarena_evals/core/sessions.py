"""Cells, sessions and seats: the plain data an eval sample turns into.

A *cell* is one registry entry (game + parameters). A *session* is one eval sample: ``seats``
seats play ``runs`` runs. What a game draws per session (its ``Draw``) lives in the shipped
samples file so that every install evaluates identical instances; ``draw_session``
is how that file was made (``python -m econarena_evals.run.make_samples``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

MIN_SEATS, MAX_SEATS = 2, 10


@dataclass(frozen=True)
class CellConfig:
    """A cell: what every game shares, and ``params``, the game's own parameters (its module's
    ``Params``). Each field, the game's included, is an eval arg in the registry YAML; ``games.cell``
    builds one from the args."""

    game: str
    runs: int = 10
    seats: int = 5
    history_runs: int = 0
    params: Any = None  # the game's ``Params``

    def __post_init__(self) -> None:
        # the game's own checks are the game's (games.check_cell); these hold for every game
        problems = []
        if self.runs < 1:
            problems.append(f"runs must be >= 1, got {self.runs}")
        if not MIN_SEATS <= self.seats <= MAX_SEATS:
            problems.append(f"seats must be an integer from {MIN_SEATS} to {MAX_SEATS}, got {self.seats} "
                            "(a game needs two players; the shipped sessions are drawn for up to ten)")
        if self.history_runs < 0:
            problems.append(f"history_runs must be >= 0, got {self.history_runs}")
        if problems:
            raise ValueError("invalid cell parameters: " + "; ".join(problems))


SHARED_FIELDS = ("game", "runs", "seats", "history_runs")  # the cell args every game takes


@dataclass(frozen=True)
class Session:
    """One eval sample: its index and ``drawn``, what the game drew for it (its module's ``Draw``)."""

    index: int
    drawn: Any

    def to_sample(self) -> dict[str, Any]:
        return {"session": self.index, **self.drawn.to_sample()}


def seat_players(n_players: int, n_seats: int, session: int) -> list[int]:
    """Which player (index into the completion fns) sits in each seat.

    Player 0 is the evaluated one; its seat rotates with the session index so no player keeps
    the lowest-seat tie-break. The others fill the remaining seats in order, cycling.
    """
    if n_players < 1:
        raise ValueError("need at least one player")
    own = session % n_seats
    others = list(range(1, n_players)) or [0]
    out, k = [], 0
    for seat in range(n_seats):
        if seat == own:
            out.append(0)
        else:
            out.append(others[k % len(others)])
            k += 1
    return out


def unique_names(names: Sequence[str]) -> list[str]:
    """Player names as report keys: a name given twice gets '#2', '#3', ... on its later entries."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def history_window(run: int, history_runs: int) -> range:
    """0-based indices of the past runs the prompt of ``run`` shows."""
    return range(max(0, run - history_runs), run)


def waves(runs: int, history_runs: int) -> list[list[int]]:
    """Runs that can be played at the same time: all of them without history, else one by one."""
    if history_runs == 0:
        return [list(range(runs))]
    return [[r] for r in range(runs)]

