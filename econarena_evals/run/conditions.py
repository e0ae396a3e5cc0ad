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

import hashlib
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


def _told(cond: Condition, short: bool = False) -> list[str]:
    """Each player's completion args as 'k=v, ...' ('' for none); ``short``: each in a few words."""
    say = label_note if short else (lambda note: note)
    return [", ".join(say(f"{k}={show(v)}") for k, v in args) for args in cond.completion_args]


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


def column_completion_notes(cond: Condition, short: bool = False) -> str:
    """The completion args in a column's name: the evaluated player's as they are (its row names
    it), an opponent's after its name, or once when every player was told the same; ``short``:
    each in a few words (``label_note``)."""
    per_player = _told(cond, short)
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


def _notes(cond: Condition, registry_path: Optional[str], short: bool) -> list[str]:
    """What names a column after its cell: the opponents, the args that differ from the registry's
    defaults, the completion args; ``short``: each said in a few words (``label_note``)."""
    notes = []
    if cond.arena:
        notes.append(_opponents_note(cond.opponents) if short else "vs " + ", ".join(cond.opponents))
    differs = non_default(cond, registry_defaults(cond.eval_name, registry_path))
    notes += [label_note(note) for note in differs] if short else differs
    told = column_completion_notes(cond, short=short)
    if told:
        notes.append(told)
    return notes


def _base_name(cond: Condition) -> str:
    return cond.cell + (f".{cond.split}" if cond.split not in ("", "dev") else "")


def column_name(cond: Condition, registry_path: Optional[str] = None) -> str:
    """Cell, '.test' for the test split, 'vs B, C' for an arena's opponents (the players after the
    evaluated one, in seating order), then what differs from the registry's defaults, every value
    in full: ``beauty_L``, ``beauty_L.test``, ``beauty_L (vs econarena/nash)``, ``beauty_L
    (temperature=0)``. The evaluated player is the row, never the column: two fns against the same
    opponents share it. ``column_label`` is the name a column goes by."""
    notes = _notes(cond, registry_path, short=False)
    return _base_name(cond) + (f" ({'; '.join(notes)})" if notes else "")


def column_label(cond: Condition, registry_path: Optional[str] = None) -> str:
    """A column's label: ``column_name`` with each part in a few words, so that a table's header
    stays a header (``beauty_L (max_tokens=128; constrained)``); the whole condition is
    ``condition_text``, in the report's legend of columns. Two conditions with the same label are
    told apart by ``table_tag`` (``report.selection``)."""
    notes = _notes(cond, registry_path, short=True)
    if len("; ".join(notes)) > NOTES_MAX:  # many settings: the first that fit, the rest a count and a tag
        shown: list[str] = []
        for note in notes:
            if len("; ".join(shown + [note])) > NOTES_MAX - 16:
                break
            shown.append(note)
        notes = shown + [f"{len(notes) - len(shown)} more #{tag(notes[len(shown):])}"]
    return _base_name(cond) + (f" ({'; '.join(notes)})" if notes else "")


def condition_text(cond: Condition, registry_path: Optional[str] = None) -> str:
    """The whole condition of a column, every value in full: its eval, and what differs from the
    registry's defaults (the opponents, the args, the completion args), or that nothing does."""
    notes = _notes(cond, registry_path, short=False)
    if not cond.self_play and not cond.arena:  # an opponent cell: its fixed seats, as the registry gives them
        opponents = cond.arg("opponents")
        notes.insert(0, "vs the cell's " + (", ".join(map(show, opponents)) if isinstance(opponents, (list, tuple))
                                            else show(opponents)))
    return cond.eval_name + ": " + "; ".join(notes or ["self-play"]) + (
        "; the registry's args otherwise" if notes else ", the registry's args")


# ---- a column's label in a few words ----

NOTE_MAX = 32  # a 'key=value' longer than this is named by a word or a tag in a column's label
OPPONENTS_MAX = 48  # 'vs A, B, ...' longer than this is named by its count and a tag
NOTES_MAX = 64  # a label's notes longer than this in all show the first few, then how many more and a tag


def tag(value: Any) -> str:
    """A short tag of a value (6 hex digits of its SHA-256): the same value, the same tag, in any process."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()[:6]


def _word(key: str, value: str) -> Optional[str]:
    """A word that says what a long completion arg does: a ``response_format`` with a JSON schema
    constrains the reply to it (``constrained``), one without asks for any JSON (``json mode``)."""
    if key != "response_format":
        return None
    try:
        given = json.loads(value)
    except ValueError:
        return None
    if not isinstance(given, Mapping):
        return None
    if "schema" in given or "json_schema" in given or given.get("type") == "json_schema":
        return "constrained"
    return "json mode" if given.get("type") == "json_object" else None


def label_note(note: str) -> str:
    """``key=value`` as a column's label says it: as it is when short, else a word for what it does
    (``constrained``) or the key and a tag of the value (``response_format#1a2b3c``)."""
    if len(note) <= NOTE_MAX or "=" not in note:
        return note
    key, value = note.split("=", 1)
    return _word(key, value) or f"{key}#{tag(value)}"


def _opponents_note(opponents: Sequence[str]) -> str:
    """'vs A, B ×3': the opponents in seating order, a run of one player counted; a long roster
    by its size and a tag."""
    runs: list[list[Any]] = []
    for p in opponents:
        if runs and runs[-1][0] == p:
            runs[-1][1] += 1
        else:
            runs.append([p, 1])
    text = "vs " + ", ".join(p if n == 1 else f"{p} ×{n}" for p, n in runs)
    return text if len(text) <= OPPONENTS_MAX else f"vs {len(opponents)} players #{tag(list(opponents))}"


def table_tag(cond: Condition) -> str:
    """A tag of a column's whole condition (``Condition.table``): told apart where labels meet."""
    table = cond.table()
    return tag([table.eval_name, list(table.players), [list(a) for a in table.args], table.seed,
                [[list(a) for a in args] for args in table.completion_args]])


# ---- the order of columns: as the eval sets list their cells ----

def _eval_sets(root: Path) -> dict[str, list[str]]:
    sets: dict[str, list[str]] = {}
    for path in sorted((root / "eval_sets").glob("*.yaml")):
        entries = _registry_file(path)
        for name, entry in (entries.items() if isinstance(entries, dict) else ()):
            evals = entry.get("evals") if isinstance(entry, dict) else None
            if isinstance(evals, list):
                sets.setdefault(str(name), [str(e) for e in evals])
    return sets


def _set_order(item: tuple[str, list[str]]) -> tuple[bool, int, str]:
    """A registry's sets in order: the one named as its evals' group (``econarena`` for
    ``econarena.beauty_L``, ...) first, then the others by the cells they list, most first."""
    name, evals = item
    return (not evals or any(e.split(".", 1)[0] != name for e in evals), -len(evals), name)


def eval_order(registry_paths: Sequence[Optional[str]] = ()) -> dict[str, int]:
    """Each eval's place in the eval sets (``econarena``'s cells first, then ``econarena-full``'s
    others, ...), the packaged registry's sets before those of the registries the logs name."""
    roots = packaged_registries("eval_sets") + [Path(p) for p in dict.fromkeys(registry_paths) if p]
    order: dict[str, int] = {}
    for root in roots:
        for _, evals in sorted(_eval_sets(root).items(), key=_set_order):
            for e in evals:
                order.setdefault(e, len(order))
    return order


def column_order(cond: Condition, name: str, order: Mapping[str, int]) -> tuple[Any, ...]:
    """Where a column stands: its cell in the eval sets' order (cells no set lists after them, by
    name), the dev split before the test split, the cell's plain column before its variants, then
    by label."""
    base = ".".join(cond.eval_name.split(".")[:2])
    place = order.get(base)
    return (place is None, place or 0, "" if place is not None else cond.cell, cond.split not in ("", "dev"),
            cond.split, name != _base_name(cond), name)
