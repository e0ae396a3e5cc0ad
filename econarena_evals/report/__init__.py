"""Reading many logs into tables, plots and pages: which logs count (``selection``), floors and
diagnostics (``analysis``), ``econarena-report`` (``build``), ``report.html`` (``html``) and
``econarena-summary`` (``summary``).

Rule: the top layer: reads logs, never calls an endpoint or evals.
"""
