"""Completion args as they come in: decoded from the command line and checked before any call.

evals splits ``--completion_args`` on every comma and then on ``=``, so a value arrives as text;
``decode_value`` reads JSON and ``@file.json`` out of it, ``check_values`` holds each numeric arg to
its domain, ``unknown_args`` names those a fn or the openai client would refuse on every call (by
their signatures, read with ``inspect``), and ``command_completion_args`` reads them back from an
old log's command line. Which of them make a condition, and who played, is ``identity``'s.
"""
from __future__ import annotations

import inspect
import json
import math
import re
import shlex
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional

from ..core.closest import with_closest


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
    "batch_poll_s": (0, None, False, True),
    "max_reply_mib": (0, None, False, True),
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


def prices_arg(value: Any) -> tuple[float, float]:
    """A model's prices per million prompt and completion tokens, ``{input: X, output: Y}`` (one left
    out: 0), as a roster file gives them and econarena/chat's ``prices`` arg carries them (for the
    plan's cost, never sent); raises ValueError in one line."""
    value = decode_value(value)
    if not isinstance(value, Mapping) or set(map(str, value)) - {"input", "output"}:
        raise ValueError("prices are {input: X, output: Y} per million tokens")
    pair = [value.get(k, 0) for k in ("input", "output")]
    if any(isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x < 0 for x in pair):
        raise ValueError("prices input and output must be numbers >= 0")
    return float(pair[0]), float(pair[1])


_WORD = re.compile(r"[A-Za-z_]+")


def typed_options(options: Mapping[str, Any], route: str = "chat") -> dict[str, Any]:
    """``options`` with each text value that the openai client's ``create()`` declares as a number
    or a boolean only (``seed: Optional[int]``, ``logprobs: Optional[bool]``) read as one: from the
    command line ``seed=3`` arrives as the text "3", which the API refuses ("'3' is not of type
    'integer'"). A value that is no such number or boolean is left as it came, for the endpoint to judge."""
    if route == "chat":
        from openai.resources.chat import Completions
    else:
        from openai.resources.completions import Completions
    try:
        params = inspect.signature(Completions.create).parameters
    except (TypeError, ValueError):
        return dict(options)
    out = dict(options)
    for name, value in options.items():
        if not isinstance(value, str) or name not in params:
            continue
        kinds = set(_WORD.findall(str(params[name].annotation)))
        if kinds & {"str", "Literal", "Any", "object"}:
            continue
        text = value.strip()
        if "bool" in kinds and text.lower() in ("true", "false"):
            out[name] = text.lower() == "true"
        elif "int" in kinds and re.fullmatch(r"[+-]?\d+", text):
            out[name] = int(text)
        elif "float" in kinds:
            try:
                out[name] = float(text)
            except ValueError:
                pass
    return out


def keyword_names(func: Callable[..., Any], named_only: bool = False) -> Optional[frozenset[str]]:
    """The args ``func`` takes by name, from its signature (``self`` and ``registry``, which evals
    passes itself, left out); None if it takes any name (``**kwargs``) or shows no signature.
    ``named_only``: its named args even if it has ``**kwargs`` (for a fn known to drop the rest)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return None
    if not named_only and any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return frozenset(p.name for p in params if p.kind in named) - {"self", "registry"}


def request_options(route: str) -> Optional[frozenset[str]]:
    """What the openai client's ``create()`` takes for ``route`` ("chat": ``chat.completions``,
    "completions": the legacy ``completions``), as the installed client declares it: a newer
    client's new options are known without a list kept here. ``extra_body``, ``extra_headers`` and
    ``extra_query`` are among them: what the client does not know goes to the server in those."""
    if route == "chat":
        from openai.resources.chat import Completions
    else:
        from openai.resources.completions import Completions
    return keyword_names(Completions.create)


def unknown_args(given: Iterable[str], takes: Optional[Iterable[str]], known: Iterable[str] = ()) -> str:
    """The args of ``given`` that ``takes`` lacks, each with its closest names among ``takes`` and
    ``known`` (``temprature (closest: temperature)``); "" if none (or ``takes`` is None: anything goes)."""
    if takes is None:
        return ""
    takes = frozenset(takes)
    unknown = sorted(set(given) - takes)
    return with_closest(unknown, sorted(takes | frozenset(known))) if unknown else ""


# where a request field only the user's server knows goes (the openai client sends it as it is)
EXTRA_BODY_HINT = "a field only your server knows goes in extra_body (extra_body=@file.json)"


def chat_arg_refusal(given: Iterable[str], own: Iterable[str]) -> str:
    """econarena/chat's refusal of the completion args of ``given`` that neither it (its own args
    ``own``) nor the openai client's ``chat.completions.create()`` takes; "" if it takes them all."""
    line = unknown_args(given, request_options("chat"), own)
    return (f"unknown completion arg {line}: neither econarena/chat nor the openai client's "
            f"chat.completions.create() takes it; {EXTRA_BODY_HINT}") if line else ""


def evals_fn_refusal(name: str, cls: Any, route: str, given: Iterable[str]) -> str:
    """Why evals' own OpenAI fn ``cls`` (made for ``name``) cannot take completion args ``given``;
    "" if it takes them all. Its constructor takes a few args and drops or refuses any other
    (``OpenAICompletionFn`` drops them into ``**kwargs``, ``OpenAIChatCompletionFn`` raises), so
    ``temperature=0`` is never sent: request options go inside ``extra_options``."""
    own = keyword_names(cls.__init__, named_only=True) or frozenset()
    line = unknown_args(given, own, request_options(route))
    if not line:
        return ""
    return (f"completion fn {name} does not take the completion arg {line}; it takes {', '.join(sorted(own))}, "
            "and request options only inside extra_options (extra_options=@file.json)")


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
