"""Where the registry this package ships lies on disk: its installed copy, or a checkout's
``registry/`` beside the package. Read by who played (``identity``: a completion fn's class, for an
old log) and by every layer above that reads the registry's YAML (evals' registry paths, the plan,
the eval sets, the inspect front end's cells, the report's columns)."""
from __future__ import annotations

from pathlib import Path


def packaged_registries(kind: str = "evals") -> list[Path]:
    """The registry roots of this package (installed copy, or a checkout's registry/) that hold ``kind``."""
    here = Path(__file__).resolve().parents[1]  # the package folder: fns/ sits in it
    return [p for p in (here / "registry", here.parent / "registry") if (p / kind).is_dir()]
