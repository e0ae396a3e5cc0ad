"""Make stock ``oaieval``/``oaievalset`` find the EconArena registry once the package is installed.

evals 3.0.1.post1 has no plugin discovery. ``pip install .`` puts ``econarena_evals_registry.pth``
in site-packages; its one line calls ``install()`` at interpreter start-up. That only registers an
import hook (no evals import, nothing slow): when ``evals.registry`` is first imported, we

* append this package's registry to ``evals.registry.DEFAULT_PATHS``;
* drop repeated registry roots (the same directory twice, or our installed copy when the user
  also passes ``--registry_path`` to a checkout's ``registry/``), which evals would otherwise
  reject as ``duplicate entry``;
* let a placeholder ``OPENAI_API_KEY`` stand in during that import only, because evals builds an
  OpenAI client at import time and the built-in players need no key;
* look up ``econarena/...`` completion fns in the registry before asking the endpoint's model
  list, so the offline players never wait on a network;
* read ``econarena/chat:MODEL`` as ``econarena/chat`` with ``model=MODEL``, so each player of an
  arena can be a different chat model (``--completion_args`` would give them all the same one).

Any failure here is swallowed: a broken hook must never break Python start-up. This is a
top-level module, not part of ``econarena_evals``, so that start-up does not import (and so pin)
the installed package ahead of a source checkout on ``PYTHONPATH``.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

MARKER = Path("evals") / "econarena.yaml"
PLACEHOLDER_KEY = "econarena-placeholder-key-not-for-openai"
CHAT_NAME = "econarena/chat"
CHAT_PREFIX = CHAT_NAME + ":"  # econarena/chat:MODEL names the model in the completion fn itself


def registry_root() -> Optional[Path]:
    """The registry of the ``econarena_evals`` that Python would import: its installed copy
    (``econarena_evals/registry``) or, for a source checkout, the ``registry/`` beside it."""
    try:
        spec = importlib.util.find_spec("econarena_evals")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    package = Path(spec.origin).resolve().parent
    for candidate in (package / "registry", package.parent / "registry"):
        if (candidate / MARKER).is_file():
            return candidate
    return None


def is_econarena_registry(path: Path) -> bool:
    return (Path(path) / MARKER).is_file()


def dedupe_roots(paths: Sequence[Any], ours: Optional[Path]) -> list[Path]:
    """Registry roots without repeats; an explicitly given EconArena registry replaces ours."""
    out: list[Path] = []
    seen: set[Path] = set()
    resolved = [(Path(p), Path(p).resolve()) for p in paths]
    ours_resolved = ours.resolve() if ours is not None else None
    explicit_econarena = any(r != ours_resolved and is_econarena_registry(r) for _, r in resolved)
    for original, real in resolved:
        if real in seen or (explicit_econarena and real == ours_resolved):
            continue
        seen.add(real)
        out.append(original)
    return out


def patch(module: Any) -> None:
    ours = registry_root()
    if ours is not None and ours not in module.DEFAULT_PATHS:
        module.DEFAULT_PATHS.append(ours)
    registry_cls = module.Registry
    if getattr(registry_cls, "_econarena_patched", False):
        return
    load = registry_cls._load_registry
    make = registry_cls.make_completion_fn

    def _load_registry(self, registry_paths, resource_type):
        return load(self, dedupe_roots(registry_paths, ours), resource_type)

    def make_completion_fn(self, name, **kwargs):
        if name.startswith(CHAT_PREFIX) and CHAT_NAME in self._completion_fns:
            kwargs = {**kwargs, "model": name[len(CHAT_PREFIX):]}
            name = CHAT_NAME
        if name.startswith("econarena/") and name in self._completion_fns:
            spec = self.get_completion_fn(name)
            args = {**(spec.args or {}), **kwargs, "registry": self}
            return module.make_object(spec.cls)(**args)
        return make(self, name, **kwargs)

    registry_cls._load_registry = _load_registry
    registry_cls.make_completion_fn = make_completion_fn
    registry_cls._econarena_patched = True


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: importlib.abc.Loader) -> None:
        self.inner = inner

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module) -> None:
        placeholder = "OPENAI_API_KEY" not in os.environ
        if placeholder:
            os.environ["OPENAI_API_KEY"] = PLACEHOLDER_KEY
        try:
            self.inner.exec_module(module)
        finally:
            if placeholder and os.environ.get("OPENAI_API_KEY") == PLACEHOLDER_KEY:
                del os.environ["OPENAI_API_KEY"]
        try:
            patch(module)
        except Exception:  # noqa: BLE001 - see module docstring
            pass


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != "evals.registry":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


def install() -> None:
    try:
        if "evals.registry" in sys.modules:
            patch(sys.modules["evals.registry"])
        elif not any(isinstance(f, _Finder) for f in sys.meta_path):
            sys.meta_path.insert(0, _Finder())
    except Exception:  # noqa: BLE001 - see module docstring
        pass
