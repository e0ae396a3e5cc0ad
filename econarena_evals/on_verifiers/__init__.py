"""The verifiers front end: the same games, prompts, seeds, players, answer rules and scorer as the
evals plugin, run by ``vf-eval econarena_evals`` (docs/verifiers.md).

Inside: ``plugin`` (the taskset, the env that plays one session per episode in self-play, and the
harness whose seat turns go through the plugin's call engine; what the package's ``__all__`` names
for verifiers' loader), ``journal`` (the run's answered seat calls, so ``vf-eval --resume`` pays for
none again) and ``serve`` (``econarena-serve``: a built-in player as a local
OpenAI-compatible endpoint, for any harness; it needs no verifiers).

Rule: a thin shell over ``core``, ``games``, ``score``, ``calls``, ``log``, ``run.config`` and the
inspect front end's registry reader and endpoint (``on_inspect.cells``, ``on_inspect.endpoint``:
neither imports inspect_ai); never evals. Only ``plugin`` imports verifiers.
"""
