"""The eval's args, grouped by what they shape, each declared once with its default.

* the cell (``sessions.CellConfig``): the game, what every game shares, and the game's ``Params``
  (``CellArgs`` below lists them all, each game's own included, for the eval's arg check and the docs);
* the sampling (``Sampling`` below): what every request asks the model for;
* the call policy (``calls.CallPolicy``): how calls are made; never part of a condition.

``EconArena`` reads its args through ``build``, ``conditions`` builds a condition from what
``settings`` makes of a log's args and knows the policy args from here, and docs/configuration.md's
table is checked against these dataclasses by a test.
"""
from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from ..calls.policy import CallPolicy
from ..core.schedule import table_count
from ..core.sessions import CellConfig
from ..games import cell, check_cell, load, param_fields
from ..games import get as get_game


@dataclass(frozen=True)
class Sampling:
    # reconstructed: the paper states neither (contract §7b)
    temperature: Optional[float] = 0.7
    max_tokens: Optional[int] = 1024
    pass_seed: bool = True  # a seed per (session, run, seat) on every call, for servers that honour one

    def __post_init__(self) -> None:
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            raise ValueError(f"temperature must be a number from 0 to 2, got {self.temperature!r}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {self.max_tokens!r}")

    def kwargs(self) -> dict[str, Any]:
        """What every completion fn call gets besides the seed."""
        return {k: v for k, v in (("temperature", self.temperature), ("max_tokens", self.max_tokens)) if v is not None}


# Every cell arg, the games' own after the shared ones: the arg names an eval takes and their types.
CellArgs = dataclasses.make_dataclass(
    "CellArgs", [(f.name, f.type, dataclasses.field(default=f.default, metadata=f.metadata))
                 for f in [f for f in dataclasses.fields(CellConfig) if f.name != "params"] + param_fields()],
    frozen=True)

_GAME_PARAMS = frozenset(f.name for f in param_fields())
GROUPS = {"cell": CellArgs, "sampling": Sampling, "policy": CallPolicy}
# seating (the cell's opponents; a melee: the roster's tournament and each player's tables in it), and
# where to resume from (not a condition)
OTHER_ARGS = {"opponents": None, "melee": None, "tables_per_player": None, "environment": None, "resume_from": None}
TABLES_PER_PLAYER = 20  # a melee's tables per player when the cell does not say
# what a melee's roster is, in the paper's names: the whole roster (the default), or "senior", the top
# five of a melee's rating played again (``econarena-senior``); a condition, so its own report column
ENVIRONMENTS = ("melee", "senior")


def check_roster_once(names: Sequence[str]) -> None:
    """A melee's roster names each player once: one player is one entry, rated once (oaieval and
    econarena-plan refuse alike; a roster file says which lines)."""
    twice = sorted({n for n in names if list(names).count(n) > 1})
    if twice:
        raise ValueError(f"the roster names a player twice: {twice} (oaieval P1,P2,... econarena.<cell>_melee, "
                         "each player once)")


def melee_args(args: Mapping[str, Any]) -> Optional[int]:
    """A melee's tables per player, or None for a cell that is no melee; a bad value refused."""
    melee = _value("melee", args["melee"], "bool") if args.get("melee") is not None else False
    given = args.get("tables_per_player")
    if not melee:
        if given is not None:
            raise ValueError("eval arg tables_per_player is a melee's: give it to a *_melee cell (melee: true)")
        return None
    tables = _value("tables_per_player", TABLES_PER_PLAYER if given is None else given, "int")
    if tables < 1:
        raise ValueError(f"eval arg tables_per_player must be >= 1, got {given!r}")
    return tables


def environment(args: Mapping[str, Any]) -> Optional[str]:
    """A melee's environment as given (None: the default, the whole roster); a bad one refused."""
    given = args.get("environment")
    if given is None:
        return None
    if melee_args(args) is None:
        raise ValueError("eval arg environment is a melee's: give it to a *_melee cell (melee: true)")
    if str(given) not in ENVIRONMENTS:
        raise ValueError(f"eval arg environment must be one of {', '.join(ENVIRONMENTS)}, got {given!r}")
    return str(given)


ENV_MAX_CONCURRENCY = "ECONARENA_MAX_CONCURRENCY"


def melee_tables(args: Mapping[str, Any], players: int) -> Optional[int]:
    """The tables a melee of ``players`` plays with these eval args (a log's spec); None for a cell
    that is no melee, or args the eval would refuse."""
    try:
        per_player = melee_args(args)
        if per_player is None or players < 2:
            return None
        return table_count(players, build("cell", {k: v for k, v in args.items() if k in names("cell")}).seats,
                           per_player)
    except (TypeError, ValueError):
        return None


def names(group: str) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(GROUPS[group]))


POLICY_ARGS = names("policy") | {"resume_from"}  # args that never change a condition
ALL_ARGS = names("cell") | names("sampling") | names("policy") | frozenset(OTHER_ARGS)


def eval_args(game: Any) -> frozenset[str]:
    """The args an eval of ``game`` takes: ``ALL_ARGS``, and the own parameters of a game outside the
    package, which this loads (``games.load``: an eval's args are trusted to name a module to import;
    a log's are not, and never come here). ValueError for a ``game`` no game has."""
    if game is None:
        return ALL_ARGS
    return ALL_ARGS | {f.name for f in dataclasses.fields(load(game).Params)}


def defaults(group: str) -> dict[str, Any]:
    return {f.name: f.default for f in dataclasses.fields(GROUPS[group]) if f.default is not dataclasses.MISSING}


def _value(name: str, value: Any, kind: str) -> Any:
    """An arg as its field's type, with a message naming it (--extra_eval_params gives strings)."""
    if value is None and kind.startswith("Optional"):
        return None
    if "bool" in kind:
        text = str(value).strip().lower()
        if text not in {"1", "0", "true", "false", "yes", "no"}:
            raise ValueError(f"eval arg {name} must be true or false, got {value!r}")
        return text in {"1", "true", "yes"}
    if "int" in kind or "float" in kind:
        try:
            number = float(value)
            if not math.isfinite(number) or ("int" in kind and not number.is_integer()):
                raise ValueError
            return int(number) if "int" in kind else number
        except (TypeError, ValueError):
            raise ValueError(f"eval arg {name} must be {'an integer' if 'int' in kind else 'a number'}, "
                             f"got {value!r}") from None
    return str(value)


def build(group: str, args: Mapping[str, Any]) -> Any:
    """The group's dataclass from the args given (the rest at their defaults), types checked."""
    cls = GROUPS[group]
    fields = list(dataclasses.fields(cls))
    if group == "cell":  # the game's own parameters, a game outside the package's included
        try:
            fields += dataclasses.fields(get_game(args.get("game")).Params)
        except ValueError:  # no such game: ``cell`` says so, naming the known ones
            pass
    kinds = {f.name: str(f.type) for f in fields}
    given = {k: _value(k, v, kinds[k]) for k, v in args.items() if k in kinds}
    if group == "policy" and "max_concurrency" not in given and os.environ.get(ENV_MAX_CONCURRENCY):
        given["max_concurrency"] = _value(ENV_MAX_CONCURRENCY, os.environ[ENV_MAX_CONCURRENCY], "int")
    if group == "cell":
        return check_cell(cell(given))
    return cls(**given)


def foreign_params(built: CellConfig, args: Mapping[str, Any]) -> Optional[str]:
    """What is wrong with ``args`` given to a cell of another game's parameters (``fee`` on a beauty
    contest): ``build`` leaves them out, so a run given them would silently play without them. None
    if every game parameter given is the cell's game's own. Only a run refuses them: a log's spec
    that holds one still reads (``settings``)."""
    own = {f.name for f in dataclasses.fields(built.params)}
    foreign = sorted(k for k in args if k in _GAME_PARAMS and k not in own)
    if not foreign:
        return None
    return (f"eval arg(s) {', '.join(foreign)} {'is' if len(foreign) == 1 else 'are'} not a parameter of the "
            f"{built.game} game, which would play without {'it' if len(foreign) == 1 else 'them'}; its own: "
            f"{', '.join(sorted(own)) or 'none'}")


def settings(args: Mapping[str, Any]) -> dict[str, Any]:
    """Every cell and sampling setting that ``build`` makes of ``args``, defaults filled in, by arg
    name: what a run given these args plays, however they were spelled (``pass_seed=yes`` is
    ``pass_seed=true``). Raises ValueError for args the eval would refuse."""
    out: dict[str, Any] = {}
    for group in ("cell", "sampling"):
        try:
            out.update(_by_name(build(group, args)))
        except TypeError as exc:  # a required arg missing (no game)
            raise ValueError(f"eval args: {exc}") from None
    return out


def _by_name(built: Any) -> dict[str, Any]:
    """A built group's values by arg name; a field that groups args of its own (a dataclass) gives
    them by their own names, as the registry YAML spells them."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(built):
        value = getattr(built, f.name)
        out.update(_by_name(value) if dataclasses.is_dataclass(value) else {f.name: value})
    return out
