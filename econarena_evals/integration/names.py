"""A wrong eval or eval-set name under the CLI: one line with the closest names, exit status 2.

evals 3.0.1.post1 logs a warning for a name its registry lacks, and then ``oaieval`` fails an
assertion whose message lists every eval it knows (48 KB, exit 1), while ``oaievalset`` runs no
eval at all and exits 0. Under ``oaieval``/``oaievalset`` (``status.under_cli``) a missing name is
refused before anything is looked up or sent: ``oaieval: no eval 'econarena.beauty_X'; closest:
econarena.beauty_L, econarena.beauty_M, econarena.beauty_H``. Any eval's name, not only ours.
In-process, and for every name the registry has, ``get_eval``/``get_eval_set`` are evals' own.
"""
from __future__ import annotations

import os
import sys
from typing import Any

from ..core.closest import closest
from .status import refuse, under_cli

# evals' method -> (what it looks up, the registry's table of those names)
LOOKUPS = {"get_eval": ("eval", "_evals"), "get_eval_set": ("eval set", "_eval_sets")}


def refuse_unknown_names(registry_module: Any) -> None:
    registry_cls = registry_module.Registry
    if getattr(registry_cls, "_econarena_names", False):
        return
    for method, (what, table) in LOOKUPS.items():
        setattr(registry_cls, method, _checked(getattr(registry_cls, method), what, table))
    registry_cls._econarena_names = True


def _checked(lookup: Any, what: str, table: str) -> Any:
    def checked(self: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        if under_cli():
            known = getattr(self, table)
            if name not in known:
                refuse(ValueError(missing(what, name, known)), who=program())
        return lookup(self, name, *args, **kwargs)

    checked.__wrapped__ = lookup
    return checked


def missing(what: str, name: str, known: Any) -> str:
    close = closest(name, known)
    if close:
        return f"no {what} {name!r}; closest: {', '.join(close)}"
    return f"no {what} {name!r}; none of the {len(known)} known is close (a typo, or a --registry_path left out?)"


def program() -> str:
    """The CLI's name as its user typed it: ``oaieval`` or ``oaievalset``."""
    name = os.path.basename(sys.argv[0] if sys.argv else "")
    return name[:-3] if name.endswith(".py") else name
