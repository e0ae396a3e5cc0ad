"""How evals' registry makes a completion fn, for ``econarena/...`` names.

* ``econarena/...`` fns are looked up in the registry before the endpoint's model list is asked,
  so the offline players never wait on a network;
* ``econarena/chat:MODEL`` is ``econarena/chat`` with ``model=MODEL``, so each player of an arena
  can be a different chat model (``--completion_args`` would give them all the same one);
* completion args whose value is JSON (``response_format={"type":"json_object"}``, or
  ``@file.json``) are decoded into objects, and each fn notes what the command line told it (for
  the eval's players event);
* secrets in ``sys.argv`` (secret completion args, a URL's user, password and query values, every
  ``extra_headers`` value) are masked before ``oaieval`` copies the command line into the log's
  run spec, which it does right after making the completion fns;
* a bad completion arg is one line and exit status 2 under the CLI, before any call; an arg the
  fn does not take is named with the closest names it does;
* a name that is neither registered nor one evals sends to a model (``oaieval gpt-4o ...`` without
  an endpoint that lists it) is one line too, with the closest registered names and, for what may
  be a model's name, the ``econarena/chat:NAME`` that plays it.
"""
from __future__ import annotations

import os
import shlex
import sys
from typing import Any

from ..core.closest import closest
from ..core.redact import redact_text
from ..fns.completion_args import decode_args, evals_fn_refusal, keyword_names, unknown_args
from .status import refuse, under_cli

CHAT_NAME = "econarena/chat"
CHAT_PREFIX = CHAT_NAME + ":"  # econarena/chat:MODEL names the model in the completion fn itself


def make_econarena_fns(registry_module: Any) -> None:
    registry_cls = registry_module.Registry
    if getattr(registry_cls, "_econarena_fns", False):
        return
    make = registry_cls.make_completion_fn

    def make_completion_fn(self, name, **kwargs):
        try:
            given, fn = _make(self, name, kwargs)
        except ValueError as exc:  # a bad completion arg: one line under oaieval, before any call
            if str(exc).startswith(EVALS_NOT_FOUND):  # the likeliest mistake: a model's name alone
                _refuse_under_cli(ValueError(not_registered(name, list(self._completion_fns) + list(self._solvers))))
            _refuse_under_cli(ValueError(f"completion fn {name}: {exc}"))
            raise
        except ModuleNotFoundError as exc:  # a fn of the user's whose module is not on the path
            said = _missing_module(self, name, exc)
            if said:
                _refuse_under_cli(ValueError(said))
            raise
        except TypeError as exc:  # an arg the fn does not take (evals' gpt-4 and temperature=...)
            if "unexpected keyword argument" not in str(exc):
                raise
            said = _not_taken(registry_module, self, name, kwargs)
            _refuse_under_cli(ValueError(said or f"completion fn {name} does not take that completion arg ({exc})"))
            raise
        try:  # what the command line told this fn, for the eval's players event
            fn.econarena_completion_args = given
        except Exception:  # noqa: BLE001 - a fn that takes no attributes is described without them
            pass
        return fn

    def _make(self, name, kwargs):
        redact_argv(sys.argv)  # also without completion args: a secret may sit in a URL or another arg
        given = decode_args(kwargs) if kwargs else {}  # a bad @file.json is the user's error: let it show
        kwargs = dict(given)
        if name.startswith(CHAT_PREFIX) and CHAT_NAME in self._completion_fns:
            kwargs = {**kwargs, "model": name[len(CHAT_PREFIX):]}
            name = CHAT_NAME
        if name.startswith("econarena/") and name in self._completion_fns:
            spec = self.get_completion_fn(name)
            args = {**(spec.args or {}), **kwargs, "registry": self}
            return given, registry_module.make_object(spec.cls)(**args)
        return given, make(self, name, **kwargs)

    registry_cls.make_completion_fn = make_completion_fn
    registry_cls._econarena_fns = True


def _not_taken(registry_module: Any, registry: Any, name: str, args: dict[str, Any]) -> str:
    """Which of ``args`` the fn ``name`` does not take, with the closest names it does (and, for
    evals' own OpenAI fns, that request options go inside ``extra_options``); "" if that cannot be
    told from the signature of the class that refused them."""
    try:
        if registry_module.is_chat_model(name):
            return evals_fn_refusal(name, registry_module.OpenAIChatCompletionFn, "chat", args)
        spec = registry.get_completion_fn(name) if name in registry._completion_fns else None
        cls = getattr(registry_module.make_object(spec.cls), "func", None) if spec else None
        line = unknown_args(args, keyword_names(cls)) if cls is not None else ""
    except Exception:  # noqa: BLE001 - the refusal must not fail: evals' own message is said instead
        return ""
    return f"completion fn {name} does not take the completion arg {line}" if line else ""


def _missing_module(registry: Any, name: str, exc: ModuleNotFoundError) -> str:
    """The refusal of completion fn ``name`` whose class cannot be imported for want of a module:
    the module, and the fix (the folder on PYTHONPATH, or the package installed); "" when the
    registry names no class for it (evals' own error is said then)."""
    try:
        spec = registry.get_completion_fn(name) if name in registry._completion_fns else None
    except Exception:  # noqa: BLE001 - the refusal must not fail: evals' own error is said instead
        return ""
    cls = str(getattr(spec, "cls", "") or "")
    if not cls or not exc.name:
        return ""
    module = cls.split(":")[0]
    raw = registry._completion_fns.get(name)
    root = raw.get("registry_path") if isinstance(raw, dict) else None
    where = f" (registry {root})" if root else ""
    if module == exc.name or module.startswith(exc.name + "."):
        return (f"completion fn {name}: its class {cls}{where} cannot be imported: no module {exc.name!r} on the "
                "Python path; put the folder that holds it on PYTHONPATH (export PYTHONPATH=/path/to/folder"
                "${PYTHONPATH:+:$PYTHONPATH}) or pip install the package that has it")
    return (f"completion fn {name}: its module {module} imports {exc.name!r}, which is not installed: "
            f"pip install the package that has it (in this Python: {sys.executable})")


# how evals 3.0.1.post1's make_completion_fn says a name is neither a model it routes nor registered
EVALS_NOT_FOUND = "Could not find CompletionFn/Solver in the registry"


def not_registered(name: str, known: list[str], argv: Any = None) -> str:
    """The refusal of a completion fn name nothing knows: the closest registered names, and, unless it
    is one of ours mistyped, how to play a chat model of that name (``econarena/chat:NAME``), as the
    command line to type."""
    said = f"no completion fn or solver {name!r} in the registry"
    close = closest(name, known)
    if close:
        said += f"; closest: {', '.join(close)}"
    if name.startswith("econarena/"):  # econarena/nsh: one of ours, mistyped
        return said if close else said + " (the built-in players: docs/players.md)"
    return (f"{said}; {'or, ' if close else ''}to play the chat model {name}, name it {CHAT_PREFIX}{name}: "
            f"{_command_with(name, CHAT_PREFIX + name, sys.argv if argv is None else argv)}")


def _command_with(name: str, instead: str, argv: list[str]) -> str:
    """The command line as typed up to the eval's name, with the completion fn ``name`` replaced
    (``oaieval gpt-4o econarena.beauty_L`` -> ``oaieval econarena/chat:gpt-4o econarena.beauty_L``)."""
    program = os.path.basename(argv[0]) if argv else "oaieval"
    program = program[:-3] if program.endswith(".py") else program
    words = list(argv[1:3])
    if words:
        words[0] = ",".join(instead if part == name else part for part in words[0].split(","))
    else:
        words = [instead, "EVAL"]
    return " ".join([program] + [shlex.quote(w) for w in words])


def _refuse_under_cli(exc: Exception) -> None:
    """One line and exit status 2 under the CLI; in-process the caller raises the original error."""
    if under_cli():
        refuse(exc)


def redact_argv(argv: list[str]) -> None:
    """Mask, in place, the value of every secret-looking name in ``--completion_args`` and
    ``--extra_eval_params`` (``api_key=sk-...`` becomes ``api_key=***``), any secret-looking
    word, a URL's user, password and query values, and every ``extra_headers`` value (``redact``).
    The arguments were parsed already; only what is written down afterwards changes."""
    for i, word in enumerate(argv):
        masked = redact_text(word)
        if masked != word:
            argv[i] = masked
