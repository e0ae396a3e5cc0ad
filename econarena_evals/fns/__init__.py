"""The completion fns: ``econarena/chat`` (any OpenAI-compatible endpoint), the built-in players,
one try per seat call for the fns whose retrying we know (``endpoints``), the completion args as
given and checked (``completion_args``), who played (``identity``), where the packaged registry lies
(``registry_files``), and token usage evals can add up (``usage``).

Rule: below the run and the log; may import ``core``, ``games`` and ``calls``, and evals' public
completion-fn API (``evals.api``, ``evals.record.record_sampling``), nothing of its internals.
"""
