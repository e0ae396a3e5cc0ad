"""The report's per-log work, done where each log is read: in a worker process (``workers``), side by side.

``econarena-report`` reads each log (``read_log``), fits its player's diagnostics (the beauty
contest's depth of reasoning) and builds its part of the session browser (its grids, and its kept
calls read again from the file while the file is still in the cache). Done here, in the process that
read the log, that work runs on every core, and what goes back to the report is the log and the
answers (``EvalLog.derived``), which ``compute`` and ``html.browser_data`` take instead of doing the
work again. Each answer is what the report would compute itself, so a report is the same either way.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..log.evallog import EvalLog, HeldCalls, read_log
from . import html as report_html
from .analysis import diagnostics


def read_for_report(path: Path, transcripts: Optional[int]) -> EvalLog:
    """``read_log(path)``, with the diagnostics of its evaluated player and its part of the browser
    (``transcripts``: sessions per log whose calls it keeps) in ``derived``."""
    # the calls its transcripts show, kept as the log is read, so that the browser's part need not read them again
    held = HeldCalls(transcripts) if transcripts != 0 else None
    log = read_log(path, held)
    if log.mixed or not log.spec or not log.is_econarena or not log.players:
        return log
    player = log.players[0]  # the row's player: ``Chosen.players``
    try:
        log.derived["diagnostics"] = {player: diagnostics(log, player)}
        log.derived["browser"] = report_html.log_piece(log, transcripts, held)
    except Exception:  # noqa: BLE001 - where the report uses this log, it does the work again, and fails there as before
        log.derived.clear()
    return log


def cached_diagnostics(log: EvalLog, player: str) -> dict:
    """``diagnostics(log, player)``, as the log's reader worked it out if it did."""
    done = log.derived.get("diagnostics") or {}
    return done[player] if player in done else diagnostics(log, player)
