"""One ``oaieval`` run: the eval (``eval``) that turns sessions into seat calls and records, its
args (``config``), what makes runs comparable (``conditions``), the plan before the first call
(``plan``), progress on stderr (``progress``), what a resume reuses (``resume``) and the command
that resumes (``resume_command``), a full disk (``disk``), the one stop on a signal (``signals``;
the exit statuses are ``integration.status``'s), the eval sets (``evalset``) and the samples files (``make_samples``).

Rule: the evals shell. May import every folder below it (``core``, ``games``, ``score``, ``calls``,
``fns``, ``log``); never the report.
"""
