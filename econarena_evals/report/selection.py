"""Which logs a report uses (contract §9), shared by ``econarena-report`` and ``econarena-summary``.

Every log is keyed by its condition (``conditions``). For one condition a finished log (it has a
final report) beats a partial one, and among finished logs the newest wins; a partial log is used
only when its condition has no finished log, and is marked so. A finished log whose plan event
names the log it resumed from takes that log's place where it can have resumed it (``resumed``);
where it cannot, both are used and the conflict is said in the note (``CONFLICT``). Every file
read that is not used gets a note saying why. A column is a condition less its evaluated player (``Condition.table``):
every fn played against the same opponents, with the same args, seed and samples, is a row of one
column, named by cell, the opponents (``vs B``) and what differs from the registry's defaults (eval
args and completion args); conditions that differ in anything else never share a column. A player is the model
that played, read from the log's ``econarena_players`` event (``fns.identity``), or for an older log
from its command line, which the log's notes then say.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from ..fns.identity import FALLBACK_NOTE
from ..log.evallog import RUNNING, EvalLog, find_logs, read_log, status_of
from ..log.format import RESUMED_FROM
from ..run.conditions import Condition, condition_of, differences, spec_args
from ..run.config import melee_args
from .columns import (
    column_label,
    column_name,
    column_order,
    condition_text,
    eval_order,
    non_default,
    registry_defaults,
    table_tag,
)
from .read_progress import Progress
from .workers import Workers

# Overall groups: a column counts towards at most one overall figure, and only with default args.
SELF_PLAY, SELF_PLAY_TEST, ARENA = "overall", "overall (test split)", "overall (arena and opponents)"
# a note's key for a contradiction the logs read hold (a log names as resumed from one it did not resume)
CONFLICT = "conflict"
# a skipped file whose first line is no JSON: perhaps a log damaged where its run spec was
GARBLED = "garbled"


@dataclass
class Chosen:
    """A log the report uses, with its condition and column."""

    log: EvalLog
    condition: Condition
    column: str  # the column's label (``conditions.column_label``), told apart from every other column's
    finished: bool
    full_name: str = ""  # the column's name with every value in full (``conditions.column_name``)
    condition_text: str = ""  # the whole condition (``conditions.condition_text``): the legend of columns

    @property
    def registry(self) -> Optional[str]:
        return (self.log.spec.get("run_config") or {}).get("eval_spec", {}).get("registry_path")

    @property
    def abbreviated(self) -> bool:
        """The label leaves out something of the condition (a long value said in a word or a tag)."""
        return self.column != self.full_name

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
        defaults = registry_defaults(self.condition.eval_name, self.registry)
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


def _resolved(path: str) -> str:
    try:
        return str(Path(path).expanduser().resolve())
    except (OSError, RuntimeError, ValueError):  # a path that cannot be resolved matches only itself
        return path


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


UNREAD = "unread"  # a note's status: none of the file could be read as what it is (``EvalLog.unread``)


def unread_log(path: Path, why: str) -> EvalLog:
    """What stands for a log whose reading never came back (``Workers.imap``'s ``failed``): its path
    and why, nothing else of it."""
    why = f"{why}: none of it is used"
    return EvalLog(path=Path(path), problems=[why], unread=why)


def select(paths: Sequence[Path], progress: Optional[Progress] = None, workers: Optional[Workers] = None,
           reader: Callable[[Path], EvalLog] = read_log) -> tuple[list[Chosen], list[dict[str, str]]]:
    """The logs to use, one per condition, and a note on every file read (``progress``: told of each).

    ``workers``: where the logs are read (each on its own, in the files' order; None: here, one by one);
    ``reader``: what reads one (``read_log``, or a function that also does per-log work of its caller's)."""
    notes: list[dict[str, str]] = []
    by_condition: dict[Condition, list[EvalLog]] = {}
    who: dict[str, str] = {}  # file -> the player it evaluates (``player_of``)
    candidates: list[EvalLog] = []  # EconArena logs with something in them
    files = list(find_logs(paths))
    sizes = [_size(p) for p in files]
    if progress is not None:
        progress.start("reading logs", len(files), "logs", sum(sizes))
    logs = workers.imap(reader, files, failed=unread_log) if workers is not None else map(reader, files)
    for path, size, log in zip(files, sizes, logs):
        who[str(path)] = player_of(log)
        if progress is not None:
            progress.step(size)
        if log.unread:
            notes.append({"file": str(path), "status": UNREAD, "why": log.unread})
        elif log.mixed:
            notes.append({"file": str(path), "status": "skipped", "why": log.mixed})
        elif not log.spec:
            notes.append({"file": str(path), "status": "skipped", "why": "; ".join(log.problems),
                          **({GARBLED: "yes"} if log.garbled else {})})
        elif not log.is_econarena:
            notes.append({"file": str(path), "status": "skipped", "why": f"not an EconArena eval ({log.eval_name})"})
        elif not log.sessions and not log.calls and not log.batches and log.stop is None:
            live = "; a live run is still writing it" if status_of(log) == RUNNING else ""
            notes.append({"file": str(path), "status": "skipped", "why": f"no seat call answered in the log{live}"})
        else:
            candidates.append(log)
    superseded, conflicts = resumed(candidates)
    for log in candidates:
        by = superseded.get(str(log.path))
        if by is not None:
            notes.append({"file": str(log.path), "status": "superseded",
                          "why": f"a finished run resumed from it, and its log is used: {by.path}"})
        else:
            by_condition.setdefault(condition_of(log.spec, log.settings or None), []).append(log)

    chosen: list[Chosen] = []
    for condition, logs in by_condition.items():
        # finished before partial, then a log that measured something before one whose every
        # session errored, then the newest
        # (and, between logs of one moment, the last by path: the same choice in any order read)
        best = max(logs, key=lambda lg: (lg.final_report is not None, _measured(lg), _created(lg), str(lg.path)))
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
        chosen.append(Chosen(best, condition, column_label(condition, registry), finished=finished,
                             full_name=column_name(condition, registry),
                             condition_text=condition_text(condition, registry)))
    name_columns(chosen)
    order = eval_order([c.registry for c in chosen])
    chosen.sort(key=lambda c: (column_order(c.condition, c.column, order), c.condition.players))
    where = inputs_folder(paths)
    for n in notes:
        n["path"], n["player"] = relative(n["file"], where), who.get(n["file"], "")
        if n["file"] in conflicts:  # said with the log's other notes, and apart (``--strict`` fails on it)
            n[CONFLICT] = conflicts[n["file"]]
            n["why"] = "; ".join(w for w in (n["why"], n[CONFLICT]) if w)
    return chosen, notes


def resumption_key(log: EvalLog) -> Condition:
    """The condition a resume holds a log to: its condition less each player's endpoint. A resume
    refuses a log of another eval, player, args or seed, but not one reached at another endpoint
    (a dead one, fixed before the resume), whose finished sessions it copies all the same."""
    return condition_of(log.spec, [{k: v for k, v in e.items() if k != "endpoint_label"}
                                   for e in log.player_settings] or None)


def not_resumed(new: EvalLog, old: EvalLog) -> Optional[str]:
    """Why ``new``, whose plan event names ``old`` as the log it resumed from, cannot have resumed
    it (None: it did): ``old`` is of another condition (``resumption_key``), finished (nothing was
    left to resume), or holds a finished session whose runs ``new`` does not hold as copied."""
    differ = differences(resumption_key(old), resumption_key(new))
    if differ:
        return "it is another condition (" + "; ".join(differ) + ")"
    if status_of(old) == "finished":
        return "it finished (nothing was left to resume)"
    held, runs = _finished_runs(new), _finished_runs(old)
    for index, kept in runs.items():
        if index not in held or not kept <= held[index]:
            return f"its finished session {index} is not in the resumed log as it finished there"
    return None


def _finished_runs(log: EvalLog) -> dict[Any, set[str]]:
    """Each finished session's runs, as a resume copies them (less the mark it adds)."""
    out: dict[Any, set[str]] = {s.get("session"): set() for s in log.sessions if not s.get("errored")}
    for r in log.runs:
        if r.get("session") in out:
            out[r["session"]].add(json.dumps({k: v for k, v in r.items() if k != RESUMED_FROM},
                                             sort_keys=True, default=str))
    return out


def resumed(candidates: Sequence[EvalLog]) -> tuple[dict[str, EvalLog], dict[str, str]]:
    """What "resumed from" settles: each log a finished run resumed from (its plan event names it)
    -> that run's log, used in its place even where the two are columns apart (the endpoint, which
    names a player, fixed before the resume); and, for each log whose claim cannot be true
    (``not_resumed``, or logs that name each other round), the conflict in words: then both logs
    are used, neither hiding the other."""
    by_path = {_resolved(str(log.path)): log for log in candidates}
    names = {id(log): by_path.get(_resolved(log.resumed_from)) for log in candidates if log.resumed_from}
    superseded: dict[str, EvalLog] = {}
    conflicts: dict[str, str] = {}
    for log in sorted(candidates, key=lambda lg: (_created(lg), str(lg.path))):  # the newest resume last: it wins
        old = names.get(id(log))
        if old is None:
            continue  # names no log read here (moved, deleted or not given): nothing to settle
        round_, at = [log], old
        while at is not None and at is not log and len(round_) <= len(candidates):
            round_.append(at)
            at = names.get(id(at))
        if at is log:
            if old is log:  # a resume never writes over its source
                conflicts[str(log.path)] = "it names itself as the log it resumed from"
            else:
                through = "" if len(round_) == 2 else " through " + ", ".join(str(lg.path) for lg in round_[2:])
                conflicts[str(log.path)] = (f"it names {old.path} as the log it resumed from, and that names it "
                                            f"back{through}: neither takes the other's place, both are used")
        elif log.final_report is not None:
            why = not_resumed(log, old)
            if why is None:
                superseded[str(old.path)] = log
            else:
                conflicts[str(log.path)] = (f"it names {old.path} as the log it resumed from, but {why}: "
                                            "both are used")
    return superseded, conflicts


ROSTER_SHOWN = 3  # a melee's roster as the inputs name it: its size, then its first players


def roster_text(players: Sequence[str]) -> str:
    """'8 players: econarena/nash, econarena/random, econarena/level1 and 5 more'."""
    shown = ", ".join(players[:ROSTER_SHOWN])
    more = len(players) - ROSTER_SHOWN
    return f"{len(players)} players: {shown}" + (f" and {more} more" if more > 0 else "")


def _is_melee(log: EvalLog) -> bool:
    try:
        return melee_args(spec_args(log.spec)) is not None
    except (ValueError, KeyError, TypeError, AttributeError):
        return False


def player_of(log: EvalLog) -> str:
    """The player a log evaluates, as the report's rows name it, and the completion fn of the
    command line where that is another name (``econarena/chat:gpt-4o (econarena/chat)``)."""
    if not log.spec or not log.players:
        return ""
    if _is_melee(log):  # a tournament evaluates its whole roster, not its first player
        return roster_text([log.labels.get(p, p) for p in dict.fromkeys(log.players)])
    first = log.players[0]
    name = log.labels.get(first, first)
    fn = next((str(e.get("cli_name")) for e in log.player_settings if e.get("name") == first and e.get("cli_name")), "")
    return name if not fn or name.startswith(fn) else f"{name} ({fn})"


def name_columns(chosen: Sequence[Chosen]) -> None:
    """Give every column a label no other column has, whatever order the logs were read in.

    A column holds one table (the condition less its evaluated player) and one row per player.
    Labels of two tables that meet (two long values said in one word, or an eval whose registry
    defaults are unknown here) get each its table's tag (``#1a2b3c``); two conditions that would
    give one column the same row (they differ only in ``--max_samples``) are told apart by it, the
    run without it keeping the label, and by the run id beyond that."""
    tables: dict[str, set[Condition]] = {}
    for c in chosen:
        tables.setdefault(c.column, set()).add(c.condition.table())
    for c in chosen:
        if len(tables[c.column]) > 1:
            tag = f" #{table_tag(c.condition)}"
            c.column, c.full_name = c.column + tag, c.full_name + tag
    rows: set[tuple[str, str]] = set()
    for c in sorted(chosen, key=lambda c: (c.condition.samples is not None, c.condition.samples or 0, _created(c.log),
                                           str(c.log.path))):
        if (c.column, c.labels[0]) in rows:
            sized = (c.column + f" [max_samples={c.condition.samples}]") if c.condition.samples else None
            said = sized if sized and (sized, c.labels[0]) not in rows else (
                c.column + f" [{c.log.spec.get('run_id', c.log.path.name)}]")
            c.full_name += said[len(c.column):]
            c.column = said
        rows.add((c.column, c.labels[0]))


def inputs_folder(paths: Sequence[Path]) -> Optional[Path]:
    """The folder the logs and folders given have in common (a file given stands for its folder)."""
    folders = [str(Path(p).absolute() if Path(p).is_dir() else Path(p).absolute().parent) for p in paths]
    try:
        return Path(os.path.commonpath(folders)) if folders else None
    except ValueError:  # different drives
        return None


def relative(file: str, folder: Optional[Path]) -> str:
    """A log's path under the common folder given, as a reader finds it there."""
    if folder is None:
        return file
    try:
        return Path(file).absolute().relative_to(folder).as_posix()
    except ValueError:
        return file
