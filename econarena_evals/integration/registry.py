"""Where evals looks for registries: this package's registry on evals' default paths, once.

evals 3.0.1.post1 has no plugin discovery: it reads its own registry, ``~/.evals`` and each
``--registry_path``. We

* append this package's registry (the installed copy, or a checkout's ``registry/`` for an
  editable install or a source checkout) to ``evals.registry.DEFAULT_PATHS``;
* drop repeats of this plugin's registry (the same directory twice, or our installed copy when the
  user also passes ``--registry_path`` to a checkout's ``registry/``), which evals would otherwise
  reject as ``duplicate entry``; every other root is left exactly as evals handles it;
* refuse a ``--registry_path`` that is not a directory (evals skips it silently, so a typo ran the
  packaged evals, or none of the user's fns, and exited 0);
* parse each registry file with libyaml's parser where PyYAML has it: evals reads every YAML file
  of its own registry (about 490) at each start with the pure-Python parser, 0.65 s of CPU of an
  ``oaieval`` that takes 2.4 s; libyaml takes 0.1 s. The objects are the same (the same safe
  constructor); a file libyaml refuses is read again by evals' own loader, which accepts or refuses
  it, with its own message, as without the plugin.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

import yaml

from ..fns.registry_files import packaged_registries
from .status import refuse


def is_econarena_registry(path: Any) -> bool:
    return (Path(path) / "evals" / "econarena.yaml").is_file()


def registry_root() -> Optional[Path]:
    """The registry of this package: its installed copy or, from a checkout, the ``registry/`` beside it."""
    return next((p for p in packaged_registries() if is_econarena_registry(p)), None)


def dedupe_roots(paths: Sequence[Any], ours: Any) -> list[Any]:
    """Registry roots with this plugin's registry at most once; other roots untouched.

    Our installed copy gives way to an EconArena registry given explicitly (a checkout's
    ``registry/``); a root that is ours or an EconArena registry appears once. Any other repeated
    root stays repeated, so evals' own ``duplicate entry`` check still sees it.
    """
    ours_resolved = Path(ours).resolve() if ours is not None else None
    resolved = [(p, Path(p).resolve()) for p in paths]
    plugin = [r == ours_resolved or is_econarena_registry(r) for _, r in resolved]
    explicit = any(is_plugin and r != ours_resolved for (_, r), is_plugin in zip(resolved, plugin))
    out, seen = [], set()
    for (original, real), is_plugin in zip(resolved, plugin):
        if is_plugin:
            if real in seen or (explicit and real == ours_resolved):
                continue
            seen.add(real)
        out.append(original)
    return out


def add_our_registry(registry_module: Any) -> Optional[Path]:
    """Put this package's registry on evals' default paths, and make every registry evals builds
    read this plugin's registry once. Returns the registry added (None if none was found)."""
    ours = registry_root()
    if ours is not None and ours not in registry_module.DEFAULT_PATHS:
        registry_module.DEFAULT_PATHS.append(ours)
    registry_cls = registry_module.Registry
    if not getattr(registry_cls, "_econarena_roots", False):
        load, add = registry_cls._load_registry, registry_cls.add_registry_paths

        def _load_registry(self, registry_paths, resource_type):
            roots = dedupe_roots(registry_paths, ours)
            if not getattr(self, "_econarena_said_roots", False):
                self._econarena_said_roots = True
                logging.getLogger(__name__).info("%s", roots_line(roots, registry_module))
            return load(self, roots, resource_type)

        def add_registry_paths(self, paths):
            for path in paths:
                refuse_missing(path)
            return add(self, paths)

        registry_cls._load_registry = _load_registry
        registry_cls.add_registry_paths = add_registry_paths
        if getattr(yaml, "CSafeLoader", None) is not None:
            registry_cls._load_file = _libyaml_load_file(registry_cls._load_file)
        registry_cls._econarena_roots = True
    return ours


def roots_line(roots: Sequence[Any], registry_module: Any) -> str:
    """The one line that stands for evals' "Loading registry from ..." lines (one per folder and kind
    of entry: 9 to 16 of them a run): the registries read, evals' and ours named short."""
    own = Path(getattr(registry_module, "__file__", "") or ".").parent / "registry"
    names = []
    for root in roots:
        path = Path(root)
        if not path.is_dir():
            continue  # evals skips a folder that is not there (~/.evals, mostly)
        names.append("evals'" if path.resolve() == own.resolve() else "econarena's" if is_econarena_registry(path)
                     else str(path))
    return f"Loading registries: {', '.join(names) or 'none'} (oaieval --debug: each folder as it is read)"


class RegistryLogFilter:
    """Drops evals' "Loading registry from <folder>/<kind>" INFO lines (``roots_line`` says them in
    one), and its warning that the model list could not be fetched for want of a key (a run of the
    built-in players or a fn of the user's needs none; a fn that does is refused in one line before
    any call), unless ``oaieval --debug``."""

    def filter(self, record: logging.LogRecord) -> bool:
        if logging.getLogger().getEffectiveLevel() <= logging.DEBUG:
            return True
        text = str(record.msg)
        if record.levelno < logging.WARNING and text.startswith("Loading registry from "):
            return False
        return not (text.startswith("Could not fetch API model IDs") and "Missing credentials" in text)


def quiet_registry_logs() -> None:
    """evals logs its registry folders on the root logger (``logging.info``) and the model-list
    warning on ``evals.registry``: a filter on each."""
    for logger in (logging.getLogger(), logging.getLogger("evals.registry")):
        if not any(isinstance(f, RegistryLogFilter) for f in logger.filters):
            logger.addFilter(RegistryLogFilter())


def _libyaml_load_file(load_file: Any) -> Any:
    """evals' ``Registry._load_file`` (name, path, spec of each entry of one YAML file), parsed by libyaml."""

    def _load_file(self, path: Path) -> Iterator[tuple[str, Path, dict]]:
        try:
            with open(path, "r", encoding="utf-8") as f:
                d = yaml.load(f, Loader=yaml.CSafeLoader)  # noqa: S506 - the safe constructor, in C
        except yaml.YAMLError:
            d = None
        if not isinstance(d, dict):  # evals' own loader reads it, or fails with its own message
            yield from load_file(self, path)
            return
        for name, spec in d.items():
            yield name, path, spec

    _load_file.__wrapped__ = load_file
    return _load_file


def refuse_missing(path: Any) -> None:
    """Under the CLI: one line and exit status 2, before any call; in-process, a ValueError."""
    if not os.path.isdir(path):
        why = "no such directory" if not os.path.exists(path) else "not a directory"
        refuse(ValueError(f"--registry_path {path}: {why}"))
