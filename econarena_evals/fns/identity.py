"""Who played and what each completion fn was told (contract §6, §9; docs/configuration.md).

A row of the report is the model that played, not the completion fn's name on the command line:
``econarena/chat --completion_args model=X`` and ``econarena/chat:X`` are one player,
``econarena/chat:X``; a built-in player given its own args on the command line carries them in
its name (``econarena/ch(tau=2)``). Every other completion arg that shapes the requests
(``max_tokens``, ``temperature``, ``response_format``, ...) belongs to the condition; the model and
the endpoint (``api_base``, ``api_key``, ...) do not, and neither do the client's own timeouts.

The eval describes its completion fns once, at the start of the run, in an ``econarena_players``
event (``players_settings``; the eval records it under ``log.format``'s name); the report tools read
that event, and for a log written before it existed fall back to the command line in the run spec
(``from_spec``). Secrets never leave this module unmasked (``redact``). Pure: no evals import, so
the report tools need neither evals nor a key.
"""
from __future__ import annotations

import json
from typing import Any, Mapping, Optional, Sequence
from urllib.parse import urlsplit

import yaml

from ..core.argvalues import normalize, show
from ..core.redact import is_secret_name, redact_mapping, redact_url
from ..core.sessions import unique_names
from .completion_args import command_completion_args
from .registry_files import packaged_registries

CHAT_NAME = "econarena/chat"
CHAT_CLASS = "econarena_evals.fns.chat:ChatCompletionFn"
# Where the classes lived before the package had folders: logs written then name them so.
CHAT_CLASSES = frozenset({CHAT_CLASS, "econarena_evals.chat:ChatCompletionFn"})

# Completion args that say where the requests go or who pays: part of the endpoint, never of the
# condition (the endpoint is shown next to the player instead).
ENDPOINT_ARGS = frozenset({"api_base", "base_url", "api_key", "organization", "project", "api_version"})
# Completion args that change how a call is made, not what is asked (``prices``: what the plan line
# prices a model's calls at, never sent).
NEUTRAL_ARGS = frozenset({"request_timeout_s", "max_retries", "max_reply_mib", "n_ctx", "registry", "name",
                          "batch", "batch_poll_s", "batch_fallback", "prices"})  # by batch or not, the same request
# A built-in player's own args, by class: they change its play, so they go into its name.
PLAYER_OWN_ARGS = {
    "econarena_evals.fns.players:LevelKPlayer": ("k",),
    "econarena_evals.fns.players:CognitiveHierarchyPlayer": ("tau", "sigma"),
    "econarena_evals.fns.players:ShadingBidder": ("share",),
    "econarena_evals.fns.players:OverbiddingBidder": ("share",),
}
BUILTIN_MODULES = ("econarena_evals.fns.players:", "econarena_evals.players:")
# evals' own OpenAI fns: what they send besides the prompt and the eval's kwargs is extra_options.
EVALS_OPENAI_CLASSES = frozenset({"evals.completion_fns.openai:OpenAIChatCompletionFn",
                                  "evals.completion_fns.openai:OpenAICompletionFn"})
DEFAULT_HOSTS = frozenset({"api.openai.com"})


def current_class(cls: Optional[str]) -> Optional[str]:
    """A class path as this version names it, also when an old log names its module before the move."""
    if cls and cls.startswith("econarena_evals.") and cls.count(".") == 1:
        module, _, name = cls.partition(":")
        moved = {"econarena_evals.chat": "econarena_evals.fns.chat",
                 "econarena_evals.players": "econarena_evals.fns.players"}
        return f"{moved.get(module, module)}:{name}"
    return cls


def is_builtin(cls: Optional[str]) -> bool:
    """Is this one of the built-in players (which send no request)?"""
    return bool(cls) and str(cls).startswith(BUILTIN_MODULES)


# ---- naming ----

def endpoint_label(base_url: Any) -> Optional[str]:
    """``host[:port][/path]`` of a base URL that is not the API's default, else None."""
    if not base_url:
        return None
    try:
        parts = urlsplit(str(base_url))
    except ValueError:
        return "?"
    host = parts.hostname or ""
    if not host or host in DEFAULT_HOSTS:
        return None
    if parts.port:
        host = f"{host}:{parts.port}"
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return host + path


def show_value(value: Any) -> str:
    """One spelling per value, as in column names: ``2``, ``2.0`` and ``"2"`` all show as 2."""
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return show(normalize(value))


def player_name(cli_name: str, cls: Optional[str], model: Optional[str], given: Mapping[str, Any]) -> str:
    """The row name: the model that played for a chat fn, the player and its own args for a
    built-in one, the command line's name otherwise."""
    base = cli_name.split(":", 1)[0] if cli_name.startswith(CHAT_NAME + ":") else cli_name
    if base == CHAT_NAME or cls in CHAT_CLASSES:
        return f"{base}:{model}" if model else base
    own = PLAYER_OWN_ARGS.get(current_class(cls) or "", ())
    if own:
        args = [f"{k}={show_value(given[k])}" for k in own if k in given]
        return f"{cli_name}({', '.join(args)})" if args else cli_name
    if cls and is_builtin(cls):
        return cli_name
    if model and "model" in given and model != cli_name:
        return f"{cli_name}:{model}"
    return cli_name


def label(entry: Mapping[str, Any]) -> str:
    """A row label: the player's name, and its endpoint when that is not the API's default."""
    endpoint = entry.get("endpoint_label")
    return f"{entry['name']} @ {endpoint}" if endpoint else str(entry["name"])


def condition_args(cls: Optional[str], given: Mapping[str, Any]) -> dict[str, Any]:
    """The completion args that shape the requests: every given arg but the model, the endpoint,
    the client's own call settings, a built-in player's own args (in its name) and any secret."""
    if cls and is_builtin(cls):
        return {}  # built-in players send no request; their own args name them
    out = {}
    for k, v in given.items():
        if k == "model" or k in ENDPOINT_ARGS or k in NEUTRAL_ARGS or is_secret_name(k) or v in (None, ""):
            continue
        if isinstance(v, Mapping):
            v = {ik: iv for ik, iv in v.items() if not is_secret_name(ik)}  # an auth header is no condition
            if not v:
                continue
        out[k] = v
    return out


# ---- describing live completion fns (the eval, at the start of the run) ----

def class_name(fn: Any) -> str:
    cls = type(fn)
    return f"{cls.__module__}:{cls.__qualname__}"


def _chat_settings(fn: Any) -> dict[str, Any]:
    """What econarena/chat sends besides the prompt: its own settings that differ from its defaults."""
    out: dict[str, Any] = {}
    for attr in ("temperature", "max_tokens", "reasoning_effort"):
        if getattr(fn, attr, None) is not None:
            out[attr] = getattr(fn, attr)
    if getattr(fn, "reasoning_forced", None) is not None:
        out["reasoning"] = fn.reasoning_forced
    if getattr(fn, "max_completion_tokens", 16384) != 16384:
        out["max_completion_tokens"] = fn.max_completion_tokens
    if getattr(fn, "extra_headers", None):
        out["extra_headers"] = dict(fn.extra_headers)
    out.update(getattr(fn, "extra_options", None) or {})
    return out


def describe(fn: Any, cli_name: str, given: Optional[Mapping[str, Any]] = None,
             opponent: bool = False) -> dict[str, Any]:
    """One entry of the ``econarena_players`` event: the fn's class, model, given completion args
    (masked), the args that make its condition, and its endpoint (without credentials)."""
    import os

    given = dict(given if given is not None else getattr(fn, "econarena_completion_args", None) or {})
    cls = class_name(fn)
    model = getattr(fn, "model", None)
    model = str(model) if model else None
    if cls in CHAT_CLASSES:
        shaping = _chat_settings(fn)
        base_url = getattr(fn, "api_base", None)
    elif cls in EVALS_OPENAI_CLASSES:
        extra = getattr(fn, "extra_options", None) or {}
        shaping = {"extra_options": dict(extra)} if isinstance(extra, Mapping) and extra else {}
        # the openai client evals builds takes OPENAI_BASE_URL when api_base is not set
        base_url = getattr(fn, "api_base", None) or os.environ.get("OPENAI_BASE_URL") or None
    else:
        shaping = given
        base_url = getattr(fn, "api_base", None) or getattr(fn, "base_url", None)
    return entry(cli_name, cls, model, given, shaping, base_url, opponent=opponent, source="event")


def entry(cli_name: str, cls: str, model: Optional[str], given: Mapping[str, Any], shaping: Mapping[str, Any],
          base_url: Optional[str], opponent: bool, source: str) -> dict[str, Any]:
    """One ``econarena_players`` entry, secrets masked: from the fn itself, or from an old log's command."""
    return {
        "name": player_name(cli_name, cls, model, given),
        "cli_name": cli_name,
        "opponent": opponent,
        "class": cls,
        "model": model,
        "completion_args": redact_mapping(given),
        "condition_args": redact_mapping(condition_args(cls, shaping)),
        "base_url": redact_url(base_url) if base_url else None,
        "endpoint_label": endpoint_label(base_url),
        "source": source,
    }


# ---- reading them back ----

def masked(entry: Mapping[str, Any]) -> dict[str, Any]:
    """An ``econarena_players`` entry read from a log, masked again: a log written before a rule of
    ``redact`` existed (or edited by hand) must not carry a secret into a summary or a report."""
    out = dict(entry)
    for key in ("completion_args", "condition_args"):
        if isinstance(out.get(key), Mapping):
            out[key] = redact_mapping(out[key])
    if out.get("base_url"):
        out["base_url"] = redact_url(out["base_url"])
    return out


def registry_class(name: str) -> Optional[str]:
    """The class of a completion fn registered in the packaged registry (for old logs), or None."""
    for root in packaged_registries("completion_fns"):
        for path in sorted((root / "completion_fns").glob("*.yaml")):
            try:
                entries = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            except (OSError, yaml.YAMLError):
                continue
            entry = entries.get(name.split(":", 1)[0] if name.startswith(CHAT_NAME + ":") else name)
            if isinstance(entry, dict) and entry.get("class"):
                return str(entry["class"])
    return None


def from_spec(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The command line's players as well as a log without an ``econarena_players`` event tells:
    names, completion args and endpoint from the spec's ``command`` (the environment it ran in,
    ``OPENAI_BASE_URL`` included, is not in the log)."""
    run_config = spec.get("run_config") or {}
    given = command_completion_args(str(run_config.get("command") or ""))
    out = []
    for cli_name in [str(p) for p in spec.get("completion_fns") or ()]:
        cls = registry_class(cli_name)
        if cli_name.startswith(CHAT_NAME + ":"):
            model: Optional[str] = cli_name.split(":", 1)[1]
        elif cls and is_builtin(cls):
            model = None
        else:
            model = str(given["model"]) if given.get("model") else None
        base_url = given.get("api_base") or given.get("base_url")
        shaping = given if cls not in EVALS_OPENAI_CLASSES else (
            {"extra_options": given["extra_options"]} if isinstance(given.get("extra_options"), Mapping) else {})
        out.append(entry(cli_name, cls, model, given, shaping, base_url, opponent=False, source="command"))
    return out


def cli_entries(players: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [p for p in players if not p.get("opponent")]


FALLBACK_NOTE = "player named from the command line (log predates the econarena_players event)"


def players_settings(cli_names: Sequence[str], cli_fns: Sequence[Any], opponent_names: Sequence[str],
                     opponent_fns: Sequence[Any]) -> list[dict[str, Any]]:
    """The ``econarena_players`` entries of a roster, names made unique (``#2``) as the eval seats them."""
    entries = [describe(fn, n) for n, fn in zip(cli_names, cli_fns)] + [
        describe(fn, n, opponent=True) for n, fn in zip(opponent_names, opponent_fns)]
    for entry, name in zip(entries, unique_names([e["name"] for e in entries])):
        entry["name"] = name
    return entries
