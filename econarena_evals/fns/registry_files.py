"""Where the registry this package ships lies on disk: its installed copy, or a checkout's
``registry/`` beside the package. Read by who played (``identity``: a completion fn's class, for an
old log) and by every layer above that reads the registry's YAML (evals' registry paths, the plan,
the eval sets, the inspect front end's cells, the report's columns)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

import yaml


def packaged_registries(kind: str = "evals") -> list[Path]:
    """The registry roots of this package (installed copy, or a checkout's registry/) that hold ``kind``."""
    here = Path(__file__).resolve().parents[1]  # the package folder: fns/ sits in it
    return [p for p in (here / "registry", here.parent / "registry") if (p / kind).is_dir()]


def builtin_players(roots: Optional[Sequence[Path]] = None) -> set[str]:
    """The completion fns this package's registry ships as built-in players: they send no request."""
    found: set[str] = set()
    for root in roots or packaged_registries():
        for path in sorted((root / "completion_fns").glob("*.yaml")):
            loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            if isinstance(loaded, dict):
                found |= {str(name) for name, entry in loaded.items() if isinstance(entry, dict)
                          and str(entry.get("class", "")).startswith("econarena_evals.fns.players:")}
    return found
