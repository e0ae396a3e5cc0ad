"""The games, one module each, found through one registry.

Every module here satisfies ``protocol.Game`` and ``protocol.GameReport``: it holds everything
specific to its game (session drawing, prompt and history text, reading its prompt back, scoring,
the equilibrium, the reference players, the report's labels). The rest of the package looks a game
up by the ``game`` eval arg or the ``game`` field of a run event and never branches on its name:
its rules through ``get``, what the report shows of it through ``report_of``. A game is its module,
its registry entries and its samples: a module outside the package is a game too when an eval's
``game`` arg names it by its import path (``load``), with no edit here (docs/architecture.md).
"""
from __future__ import annotations

import dataclasses
import importlib
import random
from types import ModuleType
from typing import Any, Mapping, Optional, Sequence, Union

from ..core.outcome import MAX_NUMBER, RunOutcome, game_number
from ..core.prompts import PromptFacts, prompt_text, seat_and_run
from ..core.sessions import SHARED_FIELDS, CellConfig, Session
from . import auction, beauty, first_price
from .protocol import MEMBERS, Game, GameReport, ReportLabels

# The games this process knows: the package's own, then each game outside it that an eval's args
# named (``load``), so every lookup below finds it as it finds the package's.
GAMES: dict[str, ModuleType] = {m.NAME: m for m in (beauty, auction, first_price)}

__all__ = ["GAMES", "Game", "GameReport", "MEMBERS", "ReportLabels", "get", "load", "report_of", "report_labels", "read_prompt",
           "cell", "param_fields", "draw_fields", "check_cell", "session_from_sample", "draw_session", "run_event",
           "outcome_from_event", "score_event", "action_range"]


UNKNOWN_LABELS = ReportLabels(distance="", first_run="", first_run_max=1.0, human="")


def _module(name: str) -> ModuleType:
    try:
        return GAMES[name]
    except KeyError:
        raise ValueError(f"game must be one of {tuple(GAMES)}, got {name!r}") from None


def load(name: Any) -> Game:
    """The game the ``game`` eval arg names: one of the package's, or a module outside it named by its
    import path (on ``PYTHONPATH``), which must define every member of the protocol and whose ``NAME``
    is that path, so its logs name where it lives. Only the eval's args (the registry YAML, the
    command line) load a module: a log's ``game`` field never imports anything (``get``).
    ValueError naming the known games for anything else."""
    if not isinstance(name, str) or name in GAMES:
        return get(name)
    if not name or not all(part.isidentifier() for part in name.split(".")):
        return get(name)  # the refusal that names the known games
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        raise ValueError(f"game must be one of {tuple(GAMES)} or a game module's import path on PYTHONPATH; "
                         f"{name!r} is neither ({exc})") from None
    missing = [m for m in MEMBERS if not hasattr(module, m)]
    if missing:
        raise ValueError(f"module {name} is no game: it lacks {', '.join(missing)} (games/protocol.py)")
    if module.NAME != name:
        raise ValueError(f"game module {name} names itself {module.NAME!r}: its NAME must be its import path, "
                         "which its logs hold")
    GAMES[name] = module
    return module  # type: ignore[return-value]


def get(name: str) -> Game:
    """The rules of a ``game`` name (its module as a ``Game``); ValueError naming the known ones for any other name."""
    return _module(name)  # type: ignore[return-value]


def report_of(name: str) -> GameReport:
    """What the report shows of a ``game`` name (its module as a ``GameReport``); ValueError as ``get``."""
    return _module(name)  # type: ignore[return-value]


def report_labels(name: object) -> ReportLabels:
    """The game's report labels; for a name no game has (a log from elsewhere), labels that name nothing."""
    return report_of(name).LABELS if isinstance(name, str) and name in GAMES else UNKNOWN_LABELS


# ---- everything that is looked up by a game's name: here, above the data modules and the games ----

def param_fields() -> list[dataclasses.Field]:
    """Every game's cell parameters, each once (games may share a ``Params``), in the games' order."""
    out: dict[str, dataclasses.Field] = {}
    for game in GAMES.values():
        for f in dataclasses.fields(game.Params):
            out.setdefault(f.name, f)
    return list(out.values())


def cell(args: Mapping[str, Any]) -> CellConfig:
    """The cell of these eval args: the shared fields, and the game's ``Params`` from the args it takes
    (another game's args are not its and are left out, as they always were). Not yet checked by the
    game: ``check_cell``."""
    shared = {k: v for k, v in args.items() if k in SHARED_FIELDS and k != "game"}
    base = CellConfig(game=args.get("game"), **shared)  # type: ignore[arg-type]  # the shared checks first
    params = get(base.game).Params
    names = {f.name for f in dataclasses.fields(params)}
    return dataclasses.replace(base, params=params(**{k: v for k, v in args.items() if k in names}))


def draw_fields(cell: CellConfig) -> dict[str, Any]:
    """What the cell's samples file depends on: the game, runs, seats and the game's draw parameters."""
    out = {k: getattr(cell, k) for k in SHARED_FIELDS if k != "history_runs"}
    out.update({f.name: getattr(cell.params, f.name) for f in dataclasses.fields(cell.params)
                if f.metadata.get("draw")})
    return out


def check_cell(cell: CellConfig) -> CellConfig:
    """The cell, if its game accepts its parameters; ValueError naming every problem otherwise."""
    problems = get(cell.game).cell_problems(cell)
    # what a run event holds of the cell must read back (core.outcome.MAX_NUMBER, the reader's bound)
    problems += [f"{f.name} {getattr(cell.params, f.name)} is past {MAX_NUMBER:g}, the most a log holds"
                 for f in dataclasses.fields(cell.params)
                 if isinstance(getattr(cell.params, f.name), (int, float)) and not isinstance(getattr(cell.params, f.name), bool)
                 and not game_number(getattr(cell.params, f.name))]
    if problems:
        raise ValueError("invalid cell parameters: " + "; ".join(problems))
    return cell


def session_from_sample(sample: Mapping[str, Any], cell: CellConfig) -> Session:
    """Read one samples-file line, checking it against the cell's parameters."""
    if "session" not in sample:
        raise ValueError(f"sample has no 'session' field: {dict(sample)}")
    return get(cell.game).session_from_sample(sample, int(sample["session"]), cell)


def draw_session(rng: random.Random, index: int, cell: CellConfig) -> Session:
    """One session of the cell's game, as the samples file holds it."""
    return get(cell.game).draw_session(rng, index, cell)


def read_prompt(prompt: Union[str, Sequence[Any]]) -> PromptFacts:
    """The game facts a seat's prompt states: which game, the seat, the run, the range or the seat's
    value and assets, and the history shown: the game's ``Facts``, a ``prompts.PromptFacts`` (docs/players.md
    lists every game's fields). The documented way for a completion fn of your own to read the game;
    ValueError for any other text."""
    text = prompt_text(prompt)
    seat_and_run(text)
    for game in GAMES.values():
        facts = game.read_prompt(text)
        if facts is not None:
            return facts
    raise ValueError("not an EconArena prompt: no game recognises it")


def run_event(outcome: RunOutcome, *, cell: str, session: int, run: int, runs: int, history_runs: int,
              game_params: dict[str, Any]) -> dict[str, Any]:
    """The ``econarena_run`` event (contract §8). ``game_params``: the game's ``event_params``."""
    return {
        "cell": cell,
        "session": session,
        "run": run,
        "runs": runs,
        "game": outcome.game,
        **game_params,
        "history_runs": history_runs,
        "winners": list(outcome.winners),
        "seats": [s.to_dict() for s in outcome.seats],
        **get(outcome.game).event_result(outcome),
    }


def outcome_from_event(event: Mapping[str, Any]) -> RunOutcome:
    """Inverse of ``run_event``: the scored run as the log holds it."""
    return get(str(event["game"])).outcome_from_event(event)


def score_event(event: Mapping[str, Any], actions: Sequence[Optional[float]], players: Sequence[str]) -> RunOutcome:
    """The run of a ``run_event`` scored again with other actions (the report's floors)."""
    return get(str(event["game"])).score_event(event, actions, players)


def action_range(event: Mapping[str, Any]) -> tuple[float, float]:
    """A valid action's bounds in the run of a ``run_event``."""
    return get(str(event["game"])).action_range(event)
