"""One spelling per arg value: shared by the modules that read eval args and completion args back
from logs and YAML (conditions, identity). Pure: where the packaged registry lies on disk is in
``fns.registry_files``."""
from __future__ import annotations

import math
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

