"""Conditions (contract §9): what makes two logs comparable.

A condition is the cell, the samples file (split), the seating (the command line's players, in
order, each the model that played at its endpoint), every eval arg that changes the game or the
sampling, the eval seed, and each player's completion args that shape its requests. Call-policy
args (how calls are made, not what is asked) are left out: a run with a longer deadline asks the
same questions. The game and sampling args are taken as the eval parses them (``config.settings``),
so equal settings are one condition however they were spelled: ``pass_seed=yes``, ``pass_seed=true``
and no ``pass_seed`` at all play alike and are one column. Everything here reads the run spec that
evals writes as a log's first line, so the report tools need neither evals nor an API key.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import yaml

from ..core.argvalues import normalize, packaged_registries, show
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


def _told(cond: Condition) -> list[str]:
    """Each player's completion args as 'k=v, ...' ('' for none)."""
    return [", ".join(f"{k}={show(v)}" for k, v in args) for args in cond.completion_args]


def completion_notes(cond: Condition) -> str:
    """'max_tokens=5, temperature=0': the completion args that make the condition. In an arena
    whose players were told different things, each player's are named."""
    per_player = _told(cond)
    told = {text for text in per_player if text}
    if not told:
        return ""
    if len(told) == 1:  # evals gives every fn of a command the same args; built-in players send none
        return told.pop()
    return "; ".join(f"{p}: {text}" for p, text in zip(cond.players, per_player) if text)


def column_completion_notes(cond: Condition) -> str:
    """The completion args in a column's name: the evaluated player's as they are (its row names
    it), an opponent's after its name, or once when every player was told the same."""
    per_player = _told(cond)
    if len(set(per_player)) == 1:
        return per_player[0] if per_player else ""
    return "; ".join(text if i == 0 else f"{p}: {text}"
                     for i, (p, text) in enumerate(zip(cond.players, per_player)) if text)


# ---- registry defaults, for naming columns ----

DEFAULT_SEED = 20220722.0  # oaieval's default --seed
_defaults_cache: dict[tuple[str, str], Optional[dict[str, Any]]] = {}


def registry_defaults(eval_name: str, registry_path: Optional[str] = None) -> Optional[dict[str, Any]]:
    """The args an eval has in the registry (YAML read with safe_load) as a condition holds them
    (``played_args``), or None if not found."""
    roots = ([Path(registry_path)] if registry_path else []) + packaged_registries()
    for root in roots:
        key = (str(root), eval_name)
        if key not in _defaults_cache:
            _defaults_cache[key] = _read_eval_args(root, eval_name)
        if _defaults_cache[key] is not None:
            return _defaults_cache[key]
    return None


_yaml_cache: dict[tuple[str, float], Any] = {}  # (file, mtime) -> its entries: each file parsed once


def _registry_file(path: Path) -> Any:
    try:
        key = (str(path), path.stat().st_mtime)
        if key not in _yaml_cache:
            _yaml_cache[key] = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return _yaml_cache[key]
    except (OSError, yaml.YAMLError):
        return None


def _read_eval_args(root: Path, eval_name: str) -> Optional[dict[str, Any]]:
    for path in sorted((root / "evals").glob("*.yaml")):
        entries = _registry_file(path)
        if entries is None:
            continue
        entry = entries.get(eval_name) if isinstance(entries, dict) else None
        if isinstance(entry, dict) and "args" in entry:
            return played_args(entry.get("args") or {})
    return None


def non_default(cond: Condition, defaults: Optional[Mapping[str, Any]]) -> list[str]:
    """'key=value' for each game or sampling arg (and the seed) that differs from the registry's."""
    out = []
    if defaults is not None:
        base = {k: normalize(v) for k, v in defaults.items()}
        for key, value in cond.args:
            if base.get(key, "<unset>") != value:
                out.append(f"{key}={show(value)}")
        for key in sorted(set(base) - {k for k, _ in cond.args}):
            out.append(f"{key}=<unset>")
    if cond.seed is not None and cond.seed != DEFAULT_SEED:
        out.append(f"seed={show(cond.seed)}")
    return out


def column_name(cond: Condition, registry_path: Optional[str] = None) -> str:
    """Cell, '.test' for the test split, 'vs B, C' for an arena's opponents (the players after the
    evaluated one, in seating order), then what differs from the registry's defaults: ``beauty_L``,
    ``beauty_L.test``, ``beauty_L (vs econarena/nash)``, ``beauty_L (temperature=0)``. The
    evaluated player is the row, never the column: two fns against the same opponents share it."""
    name = cond.cell + (f".{cond.split}" if cond.split not in ("", "dev") else "")
    notes = []
    if cond.arena:
        notes.append("vs " + ", ".join(cond.opponents))
    notes += non_default(cond, registry_defaults(cond.eval_name, registry_path))
    if column_completion_notes(cond):
        notes.append(column_completion_notes(cond))
    return name + (f" ({'; '.join(notes)})" if notes else "")
