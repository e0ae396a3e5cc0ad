"""A condition's column in the report (contract §9): its name, its label in a few words, the whole
condition as the legend says it, its tag, and its place among the columns.

What makes a condition is ``run.conditions`` (a resume compares conditions too); naming and
ordering columns is the report's alone, against the registry's defaults and eval sets (YAML read
with ``safe_load``).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import yaml

from ..core.argvalues import normalize, show
from ..fns.registry_files import packaged_registries
from ..run.conditions import DEFAULT_SEED, Condition, played_args, told


def column_completion_notes(cond: Condition, short: bool = False) -> str:
    """The completion args in a column's name: the evaluated player's as they are (its row names
    it), an opponent's after its name, or once when every player was told the same; ``short``:
    each in a few words (``label_note``)."""
    per_player = told(cond, label_note) if short else told(cond)
    if len(set(per_player)) == 1:
        return per_player[0] if per_player else ""
    return "; ".join(text if i == 0 else f"{p}: {text}"
                     for i, (p, text) in enumerate(zip(cond.players, per_player)) if text)


# ---- registry defaults, for naming columns ----

_defaults_cache: dict[tuple[str, str], Optional[dict[str, Any]]] = {}
_packaged_roots: list[Path] = []


def _packaged() -> list[Path]:
    """``packaged_registries()``, looked up once: the report asks for a column's defaults thousands of times."""
    if not _packaged_roots:
        _packaged_roots.extend(packaged_registries())
    return list(_packaged_roots)


def registry_defaults(eval_name: str, registry_path: Optional[str] = None) -> Optional[dict[str, Any]]:
    """The args an eval has in the registry (YAML read with safe_load) as a condition holds them
    (``played_args``), or None if not found."""
    roots = ([Path(registry_path)] if registry_path else []) + _packaged()
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
