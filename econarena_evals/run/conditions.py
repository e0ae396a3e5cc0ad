"""Conditions (contract §9): what makes two logs comparable.

A condition is the cell, the samples file (split), the seating (the command line's players, in
order, each the model that played at its endpoint), every eval arg that changes the game or the
sampling, the eval seed, and each player's completion args that shape its requests. Call-policy
args (how calls are made, not what is asked) are left out: a run with a longer deadline asks the
same questions. The game and sampling args are taken as the eval parses them (``config.settings``),
so equal settings are one condition however they were spelled: ``pass_seed=yes``, ``pass_seed=true``
and no ``pass_seed`` at all play alike and are one column. Everything here reads the run spec that
evals writes as a log's first line, so the report tools need neither evals nor an API key. How the
report names, labels and orders a condition's column is in ``report.columns``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Optional, Sequence

from ..core.argvalues import normalize, show
from ..fns.identity import cli_entries, from_spec, label
from .config import POLICY_ARGS, settings


@dataclass(frozen=True)
class Condition:
    eval_name: str  # econarena.<cell>.<split>.v0
    players: tuple[str, ...]  # the command line's players, in order (arena roster): model and endpoint
    args: tuple[tuple[str, Any], ...]  # normalized game and sampling args, sorted
    seed: Optional[float]
    # per player, the completion args that shape its requests (max_tokens, response_format, ...)
    completion_args: tuple[tuple[tuple[str, Any], ...], ...] = ()
    # --max_samples: the first N sessions of the samples file (None: all). Two runs of other sizes
    # are two results, but a resume may take a log of another size (``differences`` passes it over)
    samples: Optional[int] = None

    @property
    def cell(self) -> str:
        parts = self.eval_name.split(".")
        return parts[1] if len(parts) > 1 else self.eval_name

    @property
    def split(self) -> str:
        parts = self.eval_name.split(".")
        return parts[2] if len(parts) > 2 else ""

    @property
    def arena(self) -> bool:
        return len(self.players) > 1

    @property
    def opponents(self) -> tuple[str, ...]:
        """The command line's players after the evaluated one (the first), in seating order."""
        return self.players[1:]

    @property
    def self_play(self) -> bool:
        """Every seat is the evaluated player: no arena roster, no cell opponents."""
        return not self.arena and not self.arg("opponents")

    def table(self) -> "Condition":
        """The condition as its column holds it: everything but who the evaluated player is. Every
        fn played against the same opponents (players, seating, args), with the same game, samples,
        seed and completion args of its own, shares one column, as in an opponent cell."""
        return replace(self, players=self.opponents, samples=None)

    def arg(self, name: str, default: Any = None) -> Any:
        return dict(self.args).get(name, default)


def spec_args(spec: Mapping[str, Any]) -> dict[str, Any]:
    run_config = spec.get("run_config") or {}
    eval_spec = run_config.get("eval_spec") or {}
    return dict(eval_spec.get("args") or {})


def played_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """The args that make a condition: every game and sampling setting as the eval parses them
    (defaults filled in), then the others (the samples file, the opponents) as given; never a
    call-policy arg. Args the eval would refuse (a hand-edited log) are taken as they are spelled."""
    given = {k: v for k, v in args.items() if k not in POLICY_ARGS}
    try:
        return {**given, **settings(given)}
    except ValueError:
        return given


def _completion_value(value: Any) -> Any:
    """One spelling per completion arg: numbers as eval args, objects as canonical JSON."""
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return normalize(value)


def condition_of(spec: Mapping[str, Any], players: Optional[Sequence[Mapping[str, Any]]] = None) -> Condition:
    """The condition of a log, from its run spec (the log's first line) and the settings of the
    command line's completion fns: its ``econarena_players`` event, else what the spec's command
    line tells (``identity.from_spec``)."""
    run_config = spec.get("run_config") or {}
    args = played_args(spec_args(spec))
    seed = run_config.get("seed")
    entries = cli_entries(players) if players else from_spec(spec)
    return Condition(
        eval_name=str(spec.get("eval_name", "")),
        players=tuple(label(e) for e in entries),
        args=tuple(sorted((k, normalize(v)) for k, v in args.items())),
        seed=normalize(seed) if seed is not None else None,
        completion_args=tuple(
            tuple(sorted((str(k), _completion_value(v)) for k, v in (e.get("condition_args") or {}).items()))
            for e in entries),
        samples=run_config.get("max_samples") if isinstance(run_config.get("max_samples"), int) else None,
    )


def differences(a: Condition, b: Condition) -> list[str]:
    """What differs between two conditions, one short phrase each ('temperature: 0 vs 0.7')."""
    out = []
    if a.eval_name != b.eval_name:
        out.append(f"eval: {a.eval_name} vs {b.eval_name}")
    if a.players != b.players:
        out.append(f"players: {','.join(a.players)} vs {','.join(b.players)}")
    da, db = dict(a.args), dict(b.args)
    for key in sorted(set(da) | set(db)):
        if da.get(key, "<unset>") != db.get(key, "<unset>"):
            out.append(f"{key}: {show(da.get(key, '<unset>'))} vs {show(db.get(key, '<unset>'))}")
    if a.seed != b.seed:
        out.append(f"seed: {show(a.seed)} vs {show(b.seed)}")
    if a.completion_args != b.completion_args:
        out.append(f"completion args: {completion_notes(a) or '-'} vs {completion_notes(b) or '-'}")
    return out


def told(cond: Condition, say: Callable[[str], str] = lambda note: note) -> list[str]:
    """Each player's completion args as 'k=v, ...' ('' for none), each 'k=v' as ``say`` words it."""
    return [", ".join(say(f"{k}={show(v)}") for k, v in args) for args in cond.completion_args]


def completion_notes(cond: Condition) -> str:
    """'max_tokens=5, temperature=0': the completion args that make the condition. In an arena
    whose players were told different things, each player's are named."""
    per_player = told(cond)
    texts = {text for text in per_player if text}
    if not texts:
        return ""
    if len(texts) == 1:  # evals gives every fn of a command the same args; built-in players send none
        return texts.pop()
    return "; ".join(f"{p}: {text}" for p, text in zip(cond.players, per_player) if text)


DEFAULT_SEED = 20220722.0  # oaieval's default --seed
