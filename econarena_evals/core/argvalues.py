"""One spelling per arg value, and where the packaged registry is: shared by the modules that read
eval args and completion args back from logs and YAML (conditions, identity, plan, evalset)."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping


def normalize(value: Any) -> Any:
    """One spelling per value: YAML's 1.0, --extra_eval_params' '1' and 1 are the same number."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else str(value)
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in {"true", "false"}:
            return text.lower() == "true"
        try:
            return normalize(float(text))
        except ValueError:
            return text
    if isinstance(value, (list, tuple)):
        return tuple(normalize(v) for v in value)
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), normalize(v)) for k, v in value.items()))
    return str(value)


def show(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, tuple):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return str(value)


def packaged_registries(kind: str = "evals") -> list[Path]:
    """The registry roots of this package (installed copy, or a checkout's registry/) that hold ``kind``."""
    here = Path(__file__).resolve().parents[1]  # the package folder: core/ sits in it
    return [p for p in (here / "registry", here.parent / "registry") if (p / kind).is_dir()]
