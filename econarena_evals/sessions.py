"""Cells, sessions and seats: the plain data an eval sample turns into.

A *cell* is one registry entry (game + parameters). A *session* is one eval sample: ``seats``
seats play ``runs`` runs. The per-session draws (c_bar, or every run's private values) live in
the shipped samples file so that every install evaluates identical instances; ``draw_session``
is how that file was made (``python -m econarena_evals.make_samples``).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

GAMES = ("beauty", "auction")


@dataclass(frozen=True)
class CellConfig:
    """Every reconstructed parameter of a cell; each is an eval arg in the registry YAML."""

    game: str
    runs: int = 10
    seats: int = 5
    history_runs: int = 0
    # beauty contest
    prize: float = 100.0
    c_bar_min: int = 10
    c_bar_max: int = 100  # exclusive, as in "uniform in [10, 100)"
    # auction
    value_mean: float = 50.0
    value_sd: float = 10.0
    value_min: int = 1
    value_max: int = 100
    assets: float = 100.0
    fee: float = 10.0

    def __post_init__(self) -> None:
        problems = []
        if self.game not in GAMES:
            problems.append(f"game must be one of {GAMES}, got {self.game!r}")
        if self.runs < 1:
            problems.append(f"runs must be >= 1, got {self.runs}")
        if not 1 <= self.seats <= 100:
            problems.append(f"seats must be in [1, 100], got {self.seats}")
        if self.history_runs < 0:
            problems.append(f"history_runs must be >= 0, got {self.history_runs}")
        if self.game == "beauty":
            if not self.prize > 0:
                problems.append(f"prize must be > 0, got {self.prize}")
            if not 0 < self.c_bar_min < self.c_bar_max:
                problems.append(f"need 0 < c_bar_min < c_bar_max, got {self.c_bar_min}, {self.c_bar_max}")
        if self.game == "auction":
            if not self.assets > 0:
                problems.append(f"assets must be > 0, got {self.assets}")
            if not 0 <= self.fee <= self.assets:
                problems.append(f"fee must be in [0, assets], got {self.fee}")
            if not 0 <= self.value_min <= self.value_max:
                problems.append(f"need 0 <= value_min <= value_max, got {self.value_min}, {self.value_max}")
            if not self.value_sd >= 0:
                problems.append(f"value_sd must be >= 0, got {self.value_sd}")
        if problems:
            raise ValueError("invalid cell parameters: " + "; ".join(problems))

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> "CellConfig":
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in args.items() if k in known})


@dataclass(frozen=True)
class Session:
    index: int
    c_bar: Optional[int] = None  # beauty
    values: Optional[tuple[tuple[int, ...], ...]] = None  # auction: values[run][seat]

    def to_sample(self) -> dict[str, Any]:
        if self.values is not None:
            return {"session": self.index, "values": [list(v) for v in self.values]}
        return {"session": self.index, "c_bar": self.c_bar}

    @classmethod
    def from_sample(cls, sample: Mapping[str, Any], cell: CellConfig) -> "Session":
        """Read one samples-file line, checking it against the cell's parameters."""
        if "session" not in sample:
            raise ValueError(f"sample has no 'session' field: {dict(sample)}")
        index = int(sample["session"])
        if cell.game == "beauty":
            c_bar = sample.get("c_bar")
            if not isinstance(c_bar, int) or not cell.c_bar_min <= c_bar < cell.c_bar_max:
                raise ValueError(
                    f"session {index}: c_bar {c_bar!r} is not an integer in "
                    f"[{cell.c_bar_min}, {cell.c_bar_max}); regenerate the samples file"
                )
            return cls(index=index, c_bar=c_bar)
        values = sample.get("values")
        ok = (
            isinstance(values, list)
            and len(values) >= cell.runs
            and all(isinstance(r, list) and len(r) == cell.seats for r in values)
            and all(isinstance(v, int) and cell.value_min <= v <= cell.value_max for r in values for v in r)
        )
        if not ok:
            raise ValueError(
                f"session {index}: 'values' must hold at least {cell.runs} runs of {cell.seats} integers "
                f"in [{cell.value_min}, {cell.value_max}]; regenerate the samples file "
                "(python -m econarena_evals.make_samples)"
            )
        return cls(index=index, values=tuple(tuple(r) for r in values[: cell.runs]))


def draw_value(rng: random.Random, cell: CellConfig) -> int:
    """int(N(mean, sd)) redrawn until in [value_min, value_max], as the authors' package draws."""
    for _ in range(100_000):
        v = int(rng.gauss(cell.value_mean, cell.value_sd))
        if cell.value_min <= v <= cell.value_max:
            return v
    raise ValueError("value distribution almost never lands in [value_min, value_max]")


def draw_session(rng: random.Random, index: int, cell: CellConfig) -> Session:
    if cell.game == "beauty":
        return Session(index=index, c_bar=rng.randrange(cell.c_bar_min, cell.c_bar_max))
    values = tuple(tuple(draw_value(rng, cell) for _ in range(cell.seats)) for _ in range(cell.runs))
    return Session(index=index, values=values)


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

