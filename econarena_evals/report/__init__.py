"""Reading many logs into tables, plots and pages: which logs count (``selection``), floors and
diagnostics (``analysis``), the report's figures (``compute``, which writes nothing), its Markdown
(``markdown``), plots (``plots``) and page (``html``, its CSS and script in ``static/``),
``econarena-report`` itself (``build``: the command, and the one place that writes) and
``econarena-summary`` (``summary``).

Rule: the top layer: reads logs, never calls an endpoint or evals; no game is named here, the
game says how its things are labelled (``Game.REPORT``).
"""
