"""Token usage that evals 3.0.1.post1 can add up.

``oaieval`` sums every ``sampling`` event's ``usage`` after the eval and crashes, writing no final
report, when a usage holds nested objects (``completion_tokens_details`` from today's APIs) or when
two events carry different keys (https://github.com/openai/evals/issues/1556,
https://github.com/openai/evals/issues/1582). We flatten each usage as it is
recorded (``completion_tokens_details.reasoning_tokens`` -> ``completion_tokens_details_reasoning_tokens``)
and, before the report, give every usage the same keys, missing ones as 0.
"""
from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping
from typing import Any, Optional

# a sampling event's note on usage fields that were no count (recorded as missing, the reply kept)
USAGE_NOTE = "usage_note"


def _count(value: Any) -> Optional[int]:
    """A token count as a server sends one: a whole number, not negative, finite; else None."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and math.isfinite(value) and value >= 0 and value.is_integer():
        return int(value)
    return None


def flatten_usage(usage: Any, prefix: str = "", bad: Optional[list[str]] = None) -> dict[str, int]:
    """A flat {name: int} view of a usage object, dict or pydantic model.

    Only what the server sent: a field it left out (null in the client's model) is no key at all,
    so a server that sends no ``*_details`` leaves none in the report. A field that is no count
    (``Infinity``, ``NaN``, ``1e400``, a negative or fractional number, text) is left out too, as
    missing, and its name added to ``bad``: a usage never costs the reply it came with.
    """
    if type(usage) is dict and all(type(k) is str and type(v) is int and v >= 0 for k, v in usage.items()):
        # flat already (the recorder flattens every usage as it is recorded, and the eval's end asks
        # again of all of them): the same dict the loop below would make, without its checks per value
        return {prefix + k: v for k, v in usage.items()}
    if hasattr(usage, "model_dump"):
        usage = usage.model_dump()
    elif hasattr(usage, "__dict__") and not isinstance(usage, Mapping):
        usage = vars(usage)
    flat: dict[str, int] = {}
    if not isinstance(usage, Mapping):
        return flat
    for key, value in usage.items():
        name = f"{prefix}{key}"
        if value is None:
            continue  # a field the server did not send is not a count of 0
        if type(value) is int and value >= 0:  # the usual field: a count as it is (what ``_count`` says of it)
            flat[name] = value
            continue
        if isinstance(value, (Mapping, list, tuple)) or hasattr(value, "model_dump") or (
                hasattr(value, "__dict__") and not isinstance(value, (int, float, str, bytes))):
            flat.update(flatten_usage(value, prefix=f"{name}_", bad=bad))
            continue
        count = _count(value)
        if count is None:
            if bad is not None:
                bad.append(f"{name}={value!r}"[:80])
            continue
        flat[name] = count
    return flat


def usage_fields(usage: Any) -> dict[str, Any]:
    """What a sampling event records of a usage: ``usage``, flat, and a note naming each field that
    was no count (recorded as missing) when there was one. The recorder stores every usage so
    (``integration.recorder``), whoever recorded it."""
    bad: list[str] = []
    flat = flatten_usage(usage, bad=bad)
    out: dict[str, Any] = {"usage": flat}
    if bad:
        out[USAGE_NOTE] = "not a token count, recorded as missing: " + ", ".join(bad[:10])
    return out


def unify_usage_keys(recorder: Any) -> None:
    """Give every recorded usage the same keys, so evals' sum over them cannot raise KeyError."""
    events = [e for e in recorder.get_events("sampling") if isinstance(e.data, dict) and "usage" in e.data]
    keys: dict[str, None] = {}
    for e in events:
        e.data["usage"] = flatten_usage(e.data["usage"]) if e.data["usage"] is not None else {}
        keys.update(dict.fromkeys(e.data["usage"]))
    for e in events:
        e.data["usage"] = {k: e.data["usage"].get(k, 0) for k in keys}


# evals' count at the end of oaieval (evals/cli/oaieval.py, ``add_token_usage_to_result``)
_FOUND = re.compile(r"Found (\d+)/(\d+) sampling events with usage data\Z")
USAGE_DOCS = "docs/players.md#a-completion-fn-of-your-own-its-token-usage"


class UsageLineFilter:
    """evals' "Found 0/1000 sampling events with usage data" read as a fault where a fn records its
    calls without ``usage=`` (the example fn does) or a built-in player uses no tokens: the line says
    which calls carry no usage and how a fn of the user's gives it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            m = _FOUND.match(record.getMessage())
        except Exception:  # noqa: BLE001 - a line that cannot be read is left as it is
            return True
        if m and int(m.group(1)) < int(m.group(2)):
            without = int(m.group(2)) - int(m.group(1))
            record.msg = (f"{record.getMessage()}: {without:,} seat call(s) recorded no token usage (the built-in "
                          "players use none; a fn of your own that records its calls without usage= counts no "
                          f"tokens: pass usage={{...}} to record_sampling, {USAGE_DOCS})")
            record.args = None
        return True


def explain_usage_line() -> None:
    """Put ``UsageLineFilter`` on oaieval's logger, once."""
    logger = logging.getLogger("evals.cli.oaieval")
    if not any(isinstance(f, UsageLineFilter) for f in logger.filters):
        logger.addFilter(UsageLineFilter())

