"""The log: its format spelled once (``format``: event names, seat tag, metric keys), the one
bounded reader (``jsonl``), what each event stores (``recording``), reading a log back
(``evallog``), filing each seat call under its own session (``filing``) and the transcripts
(``transcripts``).

Rule: reads and writes plain JSONL; may import ``core``, ``games``, ``score`` and ``fns``
(player identity), never the run or the report, and never evals.
"""
