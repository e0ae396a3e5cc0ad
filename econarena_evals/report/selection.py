"""Which logs a report uses (contract §9), shared by ``econarena-report`` and ``econarena-summary``.

Every log is keyed by its condition (``conditions``). For one condition a finished log (it has a
final report) beats a partial one, and among finished logs the newest wins; a partial log is used
only when its condition has no finished log, and is marked so. Every file read that is not used
gets a note saying why. A column is a condition less its evaluated player (``Condition.table``):
every fn played against the same opponents, with the same args, seed and samples, is a row of one
column, named by cell, the opponents (``vs B``) and what differs from the registry's defaults (eval
args and completion args); conditions that differ in anything else never share a column. A player is the model
that played, read from the log's ``econarena_players`` event (``fns.identity``), or for an older log
from its command line, which the log's notes then say.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

from ..fns.identity import FALLBACK_NOTE
from ..log.evallog import RUNNING, EvalLog, find_logs, read_log, status_of
from ..run.conditions import Condition, column_name, condition_of, non_default, registry_defaults
from .progress import Progress
from .workers import Workers

# Overall groups: a column counts towards at most one overall figure, and only with default args.
SELF_PLAY, SELF_PLAY_TEST, ARENA = "overall", "overall (test split)", "overall (arena and opponents)"


@dataclass
class Chosen:
    """A log the report uses, with its condition and column."""

    log: EvalLog
    condition: Condition
    column: str
    finished: bool

    @property
    def players(self) -> list[str]:
        """The player the log evaluates: the command line's first. The opponents (an arena's other
        players, an opponent cell's fixed seats) are the column's yardstick, not a result: their
        figures stay in the log, out of the report's rows, so that a column holds one row per fn
        played against them."""
        return self.log.players[:1]

    @property
    def labels(self) -> list[str]:
        """The row label of each of ``players``: the model that played, and its endpoint when that
        is not the API's default (``gpt-4 @ 127.0.0.1:8765``)."""
        return [self.log.labels.get(p, p) for p in self.players]

    @property
    def errored(self) -> int:
        return sum(1 for s in self.log.sessions if s.get("errored"))

    @property
    def status(self) -> str:
        """The status word of docs/report.md: ``finished``, ``errored``, ``stopped: <cause>``, ``partial``."""
        return status_of(self.log)

    @property
    def group(self) -> Optional[str]:
        """The overall figure this column counts towards, or None (a non-default condition)."""
        registry = (self.log.spec.get("run_config") or {}).get("eval_spec", {}).get("registry_path")
        defaults = registry_defaults(self.condition.eval_name, registry)
        if defaults is None or non_default(self.condition, defaults) or any(self.condition.completion_args):
            return None
        if not self.condition.self_play:
            return ARENA if self.condition.split in ("", "dev") else None
        return SELF_PLAY if self.condition.split in ("", "dev") else SELF_PLAY_TEST


def _created(log: EvalLog) -> str:
    return str(log.spec.get("created_at", ""))


def _measured(log: EvalLog) -> bool:
    """True if at least one session finished: a run in which every session errored (a dead
    endpoint) measured nothing and must not replace one that did."""
    return any(not s.get("errored") for s in log.sessions)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def select(paths: Sequence[Path], progress: Optional[Progress] = None, workers: Optional[Workers] = None,
           reader: Callable[[Path], EvalLog] = read_log) -> tuple[list[Chosen], list[dict[str, str]]]:
    """The logs to use, one per condition, and a note on every file read (``progress``: told of each).

    ``workers``: where the logs are read (each on its own, in the files' order; None: here, one by one);
    ``reader``: what reads one (``read_log``, or a function that also does per-log work of its caller's)."""
    notes: list[dict[str, str]] = []
    by_condition: dict[Condition, list[EvalLog]] = {}
    files = list(find_logs(paths))
    sizes = [_size(p) for p in files]
    if progress is not None:
        progress.start("reading logs", len(files), "logs", sum(sizes))
    logs = workers.imap(reader, files) if workers is not None else map(reader, files)
    for path, size, log in zip(files, sizes, logs):
        if progress is not None:
            progress.step(size)
        if log.mixed:
            notes.append({"file": str(path), "status": "skipped", "why": log.mixed})
        elif not log.spec:
            notes.append({"file": str(path), "status": "skipped", "why": "; ".join(log.problems)})
        elif not log.is_econarena:
            notes.append({"file": str(path), "status": "skipped", "why": f"not an EconArena eval ({log.eval_name})"})
        elif not log.sessions and not log.calls and not log.batches and log.stop is None:
            live = "; a live run is still writing it" if status_of(log) == RUNNING else ""
            notes.append({"file": str(path), "status": "skipped", "why": f"no seat call answered in the log{live}"})
        else:
            by_condition.setdefault(condition_of(log.spec, log.settings or None), []).append(log)

    chosen: list[Chosen] = []
    for condition, logs in by_condition.items():
        # finished before partial, then a log that measured something before one whose every
        # session errored, then the newest
        best = max(logs, key=lambda lg: (lg.final_report is not None, _measured(lg), _created(lg)))
        finished = best.final_report is not None
        for log in logs:
            if log is best:
                continue
            if log.final_report is None and finished:
                why = f"partial (no final report); a finished log of the same condition is used: {best.path}"
            elif not _measured(log) and _measured(best):
                why = f"every session errored; a log of the same condition with finished sessions is used: {best.path}"
            else:
                why = f"a newer log of the same condition is used: {best.path}"
            notes.append({"file": str(log.path), "status": "superseded", "why": why})
        why = []
        if best.final_report is None:
            why.append("no final report (the run did not finish); its finished sessions are used")
        errored = sum(1 for s in best.sessions if s.get("errored"))
        if errored:
            why.append(f"{errored} errored session(s), left out of the means")
        why += [p for p in best.problems if "final report" not in p]
        if not _measured(best):
            why.append("no session finished: no figures" if best.stop is not None or not errored
                       else "every session errored: no figures")
        if not best.settings:
            why.append(FALLBACK_NOTE)
        for requested, answered in sorted(best.answered_as.items()):
            why.append(f"responses to {requested} named " + ", ".join(
                f"{model} ({n} call(s))" for model, n in sorted(answered.items())))
        notes.append({"file": str(best.path), "status": "used" if finished else status_of(best), "why": "; ".join(why)})
        registry = (best.spec.get("run_config") or {}).get("eval_spec", {}).get("registry_path")
        chosen.append(Chosen(best, condition, column_name(condition, registry), finished=finished))

    # A column holds one table (the condition less its evaluated player) and one row per player:
    # where naming could not tell two tables apart (an eval whose registry defaults are unknown
    # here), or two conditions would give one column the same row, the run id does.
    tables: dict[str, Condition] = {}
    rows: set[tuple[str, str]] = set()
    for c in sorted(chosen, key=lambda c: _created(c.log)):
        if tables.get(c.column, c.condition.table()) != c.condition.table() or (c.column, c.labels[0]) in rows:
            sized = (c.column + f" [max_samples={c.condition.samples}]") if c.condition.samples else None
            c.column = sized if sized and (sized, c.labels[0]) not in rows and tables.get(
                sized, c.condition.table()) == c.condition.table() else c.column + f" [{c.log.spec.get('run_id', c.log.path.name)}]"
        tables.setdefault(c.column, c.condition.table())
        rows.add((c.column, c.labels[0]))
    chosen.sort(key=lambda c: (c.column, c.condition.players))
    return chosen, notes
