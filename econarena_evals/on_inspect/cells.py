"""The registry's cells as the inspect front end runs them: each cell's args per split and its
sessions, read from the registry YAML and samples files this package ships (no evals needed)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import yaml

from ..fns.identity import CHAT_NAME
from ..fns.registry_files import packaged_registries
from ..games.builtin import CLASSES
from ..run.conditions import DEFAULT_SEED

PREFIX = "econarena."
SPLITS = ("dev", "test")
# the namespace of the plugin's own completion fns (econarena/chat, econarena/nash, ...)
PROVIDER = CHAT_NAME.split("/")[0]


def registry_root() -> Path:
    roots = packaged_registries()
    if not roots:
        raise RuntimeError("econarena_evals: the package's registry/ is missing (a broken install)")
    return roots[0]


def _entries(root: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path in sorted((root / "evals").glob("*.yaml")):
        loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        out.update(loaded if isinstance(loaded, dict) else {})
    return out


def cells(root: Optional[Path] = None) -> list[str]:
    """Every cell of the registry (``econarena.<cell>``, an alias of its dev split), in its order; not
    the melee cells, whose roster of many models is an ``oaieval`` run's (docs/arena.md)."""
    entries = _entries(root or registry_root())
    return [name[len(PREFIX):] for name, entry in entries.items()
            if name.startswith(PREFIX) and name.count(".") == 1 and isinstance(entry, dict) and "id" in entry
            and not _melee(entries.get(entry["id"]))]


def _melee(entry: Any) -> bool:
    args = entry.get("args") if isinstance(entry, dict) else None
    return isinstance(args, dict) and bool(args.get("melee"))


def eval_seed(seed: Any = None) -> Any:
    """The plugin's eval seed as oaieval passes it (an integer one as an int: a seat's seed is drawn from its text)."""
    seed = DEFAULT_SEED if seed is None else seed
    return int(seed) if float(seed).is_integer() else seed


def eval_name(cell: str, split: str) -> str:
    """The evals name of a cell's split, ``econarena.<cell>.<split>.v0``: what a condition is keyed by."""
    return f"{PREFIX}{cell}.{split}.v0"


def cell_args(cell: str, split: str = "dev", root: Optional[Path] = None) -> dict[str, Any]:
    """The registry's args of a cell's split (``samples_jsonl`` included); ValueError naming the splits."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    entry = _entries(root or registry_root()).get(eval_name(cell, split))
    if not isinstance(entry, dict) or not isinstance(entry.get("args"), dict):
        raise ValueError(f"no cell {cell!r} with a {split} split in the registry")
    return dict(entry["args"])


def samples(samples_jsonl: str, root: Optional[Path] = None) -> list[dict[str, Any]]:
    """The sessions of a samples file (one JSON object a line), as the registry names it."""
    path = (root or registry_root()) / "data" / samples_jsonl
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def completion_fn(name: str, root: Optional[Path] = None) -> Optional[tuple[str, dict[str, Any]]]:
    """A registered completion fn's (class name, args), e.g. ``econarena/level2`` -> ("LevelKPlayer", {"k": 2})."""
    root = root or registry_root()
    for path in sorted((root / "completion_fns").glob("*.yaml")):
        entries = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        entry = entries.get(name) if isinstance(entries, dict) else None
        if isinstance(entry, dict) and isinstance(entry.get("class"), str):
            return entry["class"].rsplit(":", 1)[-1], dict(entry.get("args") or {})
    return None


def builtin_player(name: str, args: dict[str, Any]) -> Any:
    """The built-in player the registry names ``econarena/<name>`` (its registered args, then ``args``);
    ValueError naming how a model is played instead."""
    found = completion_fn(PROVIDER + "/" + name)
    if found is None or found[0] not in CLASSES:
        raise ValueError(f"econarena/{name} is no built-in player; econarena/chat/MODEL plays a model at an "
                         "OpenAI-compatible endpoint")
    cls, registered = found
    return CLASSES[cls](**{**registered, **args})
