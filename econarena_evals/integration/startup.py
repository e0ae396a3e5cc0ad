"""What the start-up hook (``econarena_evals_hook``) does once ``evals.registry`` is imported.

The hook only finds the moment; everything it changes in evals is done from here, one concern a
module: the exit status (``status``), httpx's log lines (``http_logs``), the log's
lock (``log_file``), the placeholder key and evals' client (``client``), the registry paths
(``registry``), how ``econarena/...`` completion fns are made (``completion_fns``) and a wrong eval
or eval-set name (``names``).

A failure here never breaks the import of evals: it is logged at debug level and kept in
``ERRORS``, which ``python -m econarena_evals.integration.doctor`` lists.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from ..fns.usage import explain_usage_line
from . import client, completion_fns, http_logs, log_file, names, registry, status

ERRORS: list[tuple[str, str]] = []  # (where, repr of the exception), for the doctor


def note(where: str, exc: BaseException) -> None:
    ERRORS.append((where, f"{type(exc).__name__}: {exc}"))
    try:
        logging.getLogger("econarena_evals_hook").debug("econarena hook: %s failed", where, exc_info=exc)
    except Exception:  # noqa: BLE001 - reporting must not fail either
        pass


def load(exec_module: Callable[[Any], None], module: Any) -> None:
    """Execute ``evals.registry`` with its own loader's ``exec_module`` (an error there is evals'
    own and raises as without the plugin), then patch it."""
    client.exec_with_placeholder_key(exec_module, module)
    patch(module)


def patch(module: Any) -> None:
    """Every change to the freshly imported ``evals.registry`` module (and, through it, evals)."""
    import evals.record  # noqa: PLC0415 - evals' package, not ours: evals.registry is imported by now

    steps = [
        ("registering the exit status", status.apply_at_exit),
        ("quieting httpx's request lines", http_logs.quiet_http_logs),
        ("quieting the registry's lines", registry.quiet_registry_logs),
        ("saying which calls recorded no usage", explain_usage_line),
        ("locking the record path", lambda: log_file.lock_record_path(evals.record.LocalRecorder)),
        ("replacing evals' client", lambda: client.replace_client(module)),
        ("adding the registry", lambda: registry.add_our_registry(module)),
        ("making econarena completion fns", lambda: completion_fns.make_econarena_fns(module)),
        ("refusing unknown eval names", lambda: names.refuse_unknown_names(module)),
    ]
    for where, step in steps:
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - see module docstring
            note(where, exc)
    registry_cls = getattr(module, "Registry", None)
    done = ("_econarena_roots", "_econarena_fns", "_econarena_names")
    if registry_cls is not None and all(getattr(registry_cls, flag, False) for flag in done):
        registry_cls._econarena_patched = True
