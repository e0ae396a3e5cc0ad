"""Completion args as they come in: decoded from the command line and checked before any call.

evals splits ``--completion_args`` on every comma and then on ``=``, so a value arrives as text;
``decode_value`` reads JSON and ``@file.json`` out of it, ``check_values`` holds each numeric arg to
its domain, and ``command_completion_args`` reads them back from an old log's command line. Which
of them make a condition, and who played, is ``identity``'s.
"""
from __future__ import annotations

import json
import math
import shlex
from pathlib import Path
from typing import Any, Mapping, Optional


def decode_value(value: Any) -> Any:
    """A completion arg's value from the command line: a JSON object or array becomes that object,
    ``@path.json`` the JSON that file holds; anything else is left as it is.

    evals splits ``--completion_args`` on every comma and then on ``=``, so a JSON value with a
    comma (or an ``=``) cannot be written inline; ``@file.json`` carries any JSON.
    """
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("@") and text.lower().endswith(".json"):
        path = Path(text[1:]).expanduser()
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"completion arg {value!r}: cannot read {path}: {exc.strerror}") from None
        except ValueError as exc:
            raise ValueError(f"completion arg {value!r}: {path} is not JSON: {exc}") from None
    if text[:1] in "{[" and text[-1:] in "}]":
        try:
            return json.loads(text)
        except ValueError:
            return value
    return value


def decode_args(args: Mapping[str, Any]) -> dict[str, Any]:
    return {k: decode_value(v) for k, v in args.items()}


# Completion args with a numeric domain: (lowest, highest, integer, lowest excluded); None: no
# bound. A value outside it (nan, inf, a negative, max_tokens=0) fails every call, at the endpoint
# or in the client, after the run has started: refused before any call instead.
NUMERIC_ARGS: dict[str, tuple[Optional[float], Optional[float], bool, bool]] = {
    "temperature": (0, 2, False, False),
    "top_p": (0, 1, False, False),
    "frequency_penalty": (-2, 2, False, False),
    "presence_penalty": (-2, 2, False, False),
    "max_tokens": (1, None, True, False),
    "max_completion_tokens": (1, None, True, False),
    "max_retries": (0, None, True, False),
    "request_timeout_s": (0, None, False, True),
}


def _domain(low: Optional[float], high: Optional[float], integer: bool, above: bool) -> str:
    kind = "an integer" if integer else "a number"
    if high is not None:
        return f"{kind} from {low:g} to {high:g}"
    return f"{kind} {'above' if above else 'of at least'} {low:g}"


def check_values(args: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` with every arg of ``NUMERIC_ARGS`` as a number in its domain (None stays None);
    raises ValueError naming the first arg outside it."""
    out = dict(args)
    for name, (low, high, integer, above) in NUMERIC_ARGS.items():
        value = args.get(name)
        if value is None:
            continue
        try:
            if isinstance(value, bool):
                raise ValueError
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        inside = math.isfinite(number) and (not integer or number.is_integer()) and (
            low is None or (number > low if above else number >= low)) and (high is None or number <= high)
        if not inside:
            raise ValueError(f"completion arg {name} must be {_domain(low, high, integer, above)}, got {value!r}")
        out[name] = int(number) if integer else number
    return out


def command_completion_args(command: str) -> dict[str, Any]:
    """``--completion_args`` of an oaieval command line, split as evals splits it."""
    try:
        words = shlex.split(command or "")
    except ValueError:
        return {}
    value = None
    for i, word in enumerate(words):
        if word == "--completion_args" and i + 1 < len(words):
            value = words[i + 1]
        elif word.startswith("--completion_args="):
            value = word.split("=", 1)[1]
    out: dict[str, Any] = {}
    for pair in (value or "").split(","):
        name, eq, v = pair.partition("=")
        if eq and name:
            try:
                out[name] = decode_value(v)
            except ValueError:  # an @file that is gone: keep what the command said
                out[name] = v
    return out
