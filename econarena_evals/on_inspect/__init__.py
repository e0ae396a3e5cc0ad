"""The inspect_ai front end: the same games, prompts, seeds, players, answer rules and scorer as the
evals plugin, run by ``inspect eval econarena_evals/<cell>`` (docs/inspect.md).

Inside, from the bottom up: ``cells`` (the registry's cells and their samples, read without evals),
``endpoint`` (seat calls to an OpenAI-compatible endpoint, paced and retried by ``calls``' lanes),
``models`` (the ``econarena/...`` inspect models: the built-in players, and ``econarena/chat/MODEL``),
``tasks`` (one task per cell: one Sample per session, the solver that plays it, the scorer) and
``registry`` (what inspect's entry point loads).

Rule: a thin shell over ``core``, ``games``, ``score``, ``calls``, ``log`` (the names of what the
inspect log stores) and ``run.config`` (the eval args); never evals. Only this folder imports inspect_ai.
"""
