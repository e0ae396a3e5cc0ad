"""Token usage that evals 3.0.1.post1 can add up.

``oaieval`` sums every ``sampling`` event's ``usage`` after the eval and crashes, writing no final
report, when a usage holds nested objects (``completion_tokens_details`` from today's APIs) or when
two events carry different keys (https://github.com/openai/evals/issues/1556,
https://github.com/openai/evals/issues/1582). We flatten each usage as it is
recorded (``completion_tokens_details.reasoning_tokens`` -> ``completion_tokens_details_reasoning_tokens``)
and, before the report, give every usage the same keys, missing ones as 0.
"""
from __future__ import annotations

from typing import Any, Mapping


def flatten_usage(usage: Any, prefix: str = "") -> dict[str, int]:
    """A flat {name: int} view of a usage object, dict or pydantic model.

    Only what the server sent: a field it left out (null in the client's model) is no key at all,
    so a server that sends no ``*_details`` leaves none in the report.
    """
    if hasattr(usage, "model_dump"):
        usage = usage.model_dump()
    elif hasattr(usage, "__dict__") and not isinstance(usage, Mapping):
        usage = vars(usage)
    flat: dict[str, int] = {}
    if not isinstance(usage, Mapping):
        return flat
    for key, value in usage.items():
        name = f"{prefix}{key}"
        if isinstance(value, bool):
            flat[name] = int(value)
        elif isinstance(value, (int, float)):
            flat[name] = int(value)
        elif value is None:
            continue  # a field the server did not send is not a count of 0
        else:
            nested = flatten_usage(value, prefix=f"{name}_")
            flat.update(nested)
    return flat


def flat_usage(type: str, data: Any) -> Any:  # noqa: A002 - evals' own name
    """A recorder step (``integration.recorder.wrap``): a ``sampling`` event's usage, flat."""
    if type == "sampling" and isinstance(data, dict) and data.get("usage") is not None:
        data = {**data, "usage": flatten_usage(data["usage"])}
    return data


def unify_usage_keys(recorder: Any) -> None:
    """Give every recorded usage the same keys, so evals' sum over them cannot raise KeyError."""
    events = [e for e in recorder.get_events("sampling") if isinstance(e.data, dict) and "usage" in e.data]
    keys: dict[str, None] = {}
    for e in events:
        e.data["usage"] = flatten_usage(e.data["usage"]) if e.data["usage"] is not None else {}
        keys.update(dict.fromkeys(e.data["usage"]))
    for e in events:
        e.data["usage"] = {k: e.data["usage"].get(k, 0) for k in keys}
