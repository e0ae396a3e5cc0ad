"""Reading many logs into tables, plots and pages: which logs count (``selection``), how a column is
named and ordered (``conditions``), floors and
diagnostics (``analysis``), the report's figures (``compute``, which writes nothing), its Markdown
(``markdown``), plots (``plots``) and page (``html``, its CSS and script in ``static/``),
``econarena-report`` itself (``build``: the command, and the one place that writes) and
``econarena-summary`` (``summary``).

Rule: the top layer: reads logs, never calls an endpoint or evals; no game is named here, the
game says how its things are labelled (``GameReport.LABELS``), through ``games.report_of``.
"""

import os

# Before numpy is first imported: the report's numpy work is small matrix products by the thousand
# (the depth fits' bootstrap), on which OpenBLAS's threads only spin, at three times the CPU of one
# thread; the report tools run worker processes of their own (``workers``). A value set outside stands.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
