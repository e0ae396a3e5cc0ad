"""Numbers from scored runs: the EconArena Score and its parts (``metrics``), bootstrap intervals
over sessions (``intervals``) and paired comparisons of two players (``paired``).

Rule: pure functions over ``core`` data and the ``games``; no evals, no files, no printing.
"""
