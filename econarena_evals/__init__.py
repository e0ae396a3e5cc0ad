"""EconArena for OpenAI Evals: the games of "Economics Arena for Large Language Models" as evals.

The folders, from the bottom layer up; each may import only the folders above it in this list
(``tests/test_layering.py`` holds them to it), and each ``__init__`` states its rule:

- ``core``: plain data (sessions, runs, prompts, answers) and pure helpers;
- ``games``: one module per game, everything about that game;
- ``score``: the EconArena Score, intervals and paired comparisons;
- ``calls``: seat calls to an endpoint (errors, pacing, retries, deadlines);
- ``fns``: the completion fns (``econarena/chat``, the built-in players) and who played;
- ``integration``: whatever knows evals' internals (the start-up hook's patches, the one wrapper
  on evals' recorder, the exit status of the ``oaieval`` process);
- ``log``: the log format, writing and reading it;
- ``run``: one ``oaieval`` run (the eval, its config, plan, progress, resume, exit status);
- ``on_inspect``: the inspect_ai front end (``inspect eval econarena_evals/<cell>``), without evals;
- ``on_verifiers``: the verifiers front end (``vf-eval econarena_evals``), without evals;
- ``report``: ``econarena-summary``, ``econarena-report`` and ``report.html``.

docs/architecture.md has the map and the path of one seat call through it.
"""

import importlib as _importlib

# verifiers' loader (``vf-eval econarena_evals``) imports this package by the taskset id and takes its
# Taskset, Env and Harness from ``__all__``: they are loaded from ``on_verifiers.plugin`` only when
# asked for, so the plugin and the inspect front end never import verifiers.
_VERIFIERS_PLUGIN = "on_verifiers.plugin"
__all__ = ["EconArenaTaskset", "EconArenaEnv", "EconArenaHarness"]


def __getattr__(name: str):
    if name in __all__:
        try:
            plugin = _importlib.import_module(f"{__name__}.{_VERIFIERS_PLUGIN}")
        except ModuleNotFoundError as exc:
            raise ImportError(f"{name} is the verifiers front end's: pip install 'econarena-evals[verifiers]' "
                              f"(Python 3.11 or later, a venv without evals; {exc})") from exc
        return getattr(plugin, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
