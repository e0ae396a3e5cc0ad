"""Print EconArena logs as one table: ``econarena-summary [LOG_OR_DIR ...] [--strict] [--price-in P --price-out P]``.

The same rules as ``econarena-report`` (``selection``): one row per player and condition, the
column named by cell plus what differs from the registry's defaults, a finished log before a
partial one and the newest finished among several. A partial log (the run stopped before its final
report) is listed, marked, re-scored from the sessions it finished, with the command that resumes
it. Errored sessions are listed under the table. ``--strict`` exits 1 when any listed log has
errored or missing sessions, when a log names as the one it resumed from a log it did not
resume (``selection.resumed``), or when a file's first line is not JSON (a damaged log, perhaps), for scripts that must not pass a run with holes in it. Under the
table, the tokens each player used in each column and, at the prices given, their cost (``tokens``).
With no log or folder named, it reads only this user's logs in evals' shared ``/tmp/evallogs``
(``own_logs``) and says so.
"""
from __future__ import annotations

import argparse
import os
import sys
import textwrap
from pathlib import Path
from typing import Any, Optional

from ..core.redact import redact_text
from ..fns.identity import FALLBACK_NOTE
from ..log.evallog import RUNNING, EvalLog, find_logs, rescore_events
from ..log.format import metric_key
from ..log.inspect_log import FRONT_END
from ..log.verifiers_log import FRONT_END as VERIFIERS
from ..run.config import melee_tables
from ..run.resume_command import hint, resume_env
from ..score.intervals import metric_interval
from ..score.metrics import METRICS
from .analysis import floors, nash_ceilings
from .arena import NO_COLUMNS, counts_line, is_melee
from .arena import section as arena_section
from .arena import text as arena_text
from .compute import rows_of, work_out_intervals
from .leaderboard import LEGEND as LEADERBOARD_LEGEND
from .leaderboard import Entry, leaderboard, text_rows
from .read_progress import Progress
from .selection import CONFLICT, GARBLED, UNREAD, Chosen, select
from .tokens import (
    NOTE,
    Prices,
    add_price_options,
    cost_note,
    price_problem,
    prices_of,
    shown_rows,
    table_head,
    tokens_result,
    total_cells,
)
from .workers import Workers, add_workers_option, collect_less

# where oaieval writes a run given no --record_path: one folder for every user of the machine
EVALS_LOGS = Path("/tmp/evallogs")


def own_logs(folder: Path) -> tuple[list[Path], str]:
    """The logs in ``folder`` this user's processes wrote (by the files' owner), and the line that
    says what was read and how to read something else."""
    logs = list(find_logs([folder])) if folder.is_dir() else []
    uid = os.getuid() if hasattr(os, "getuid") else None

    def owner(path: Path) -> Optional[int]:
        try:
            return path.stat().st_uid
        except OSError:  # gone since it was listed
            return None

    mine = [p for p in logs if uid is None or owner(p) == uid]
    others = f", {len(logs) - len(mine)} of other users left out" if len(mine) < len(logs) else ""
    return mine, (f"econarena-summary: no folder named, so this reads your {len(mine)} log(s) in {folder}{others}, "
                  "the folder where oaieval writes every run given no --record_path (so your other days' runs are "
                  "here too; other users' are not read); "
                  "to read one run, name its folder or logs: econarena-summary runs/gpt-4 (econarena-run --out "
                  "runs/gpt-4, or oaieval --record_path runs/gpt-4/NAME.jsonl)")


def _fmt(x: object) -> str:
    return f"{x:.3f}" if isinstance(x, float) else "-" if x is None else str(x)


def _with_interval(mean: object, values: list[float], column: str, player: str, metric: str) -> str:
    """'0.723 [0.712, 0.735]': the mean and the report's 95 % interval over sessions."""
    if not isinstance(mean, (int, float)) or len(values) < 2:
        return _fmt(mean)
    lo, hi = metric_interval(values, column, player, metric)
    return f"{float(mean):.3f} [{lo:.3f}, {hi:.3f}]"


def session_values(log: EvalLog, player: str, metric: str) -> list[float]:
    """One player's per-session figures of a metric, over the finished sessions."""
    key = metric_key(metric, player, log.players)
    return [float(s[key]) for s in log.sessions if not s.get("errored") and s.get(key) is not None]


LEGEND = ("mean [95 % bootstrap interval over sessions]; each part in [0, 1], higher = more rational; eas = mean of "
          "the five. In self-play every seat is one player, so win_rate is 1/seats ({share}) by construction, and so "
          "is beauty rationality unless seats tie: they separate players only in arena and opponent cells. ")


def figures(log: EvalLog) -> dict[str, Any]:
    """The final report, or for a partial log what its finished sessions re-score to."""
    if log.final_report is not None:
        return log.final_report
    done = {int(s["session"]) for s in log.sessions if not s.get("errored")}
    return rescore_events([r for r in log.runs if int(r["session"]) in done], log.players,
                          sessions=[int(s["session"]) for s in log.sessions])[1]


def expected_sessions(log: EvalLog) -> Optional[int]:
    """How many sessions the run was asked for: --max_samples, else the samples file's lines (a
    melee: its schedule's tables)."""
    run_config = log.spec.get("run_config") or {}
    if run_config.get("max_samples"):
        return int(run_config["max_samples"])
    eval_spec = run_config.get("eval_spec") or {}
    tables = melee_tables(eval_spec.get("args") or {}, len(log.players))
    if tables is not None:
        return tables
    samples = (eval_spec.get("args") or {}).get("samples_jsonl")
    registry = eval_spec.get("registry_path")
    if not samples or not registry:
        return None
    path = Path(registry) / "data" / samples
    try:
        return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    except OSError:
        return None


def holes(c: Chosen) -> list[str]:
    """What is missing from a log: errored sessions, sessions never played, no final report."""
    out = []
    if c.errored:
        first = next(s.get("error") for s in c.log.sessions if s.get("errored"))
        out.append(f"{c.errored} errored session(s); first: {redact_text(str(first))}")
    expected = expected_sessions(c.log)
    if expected is not None and len(c.log.sessions) < expected:
        out.append(f"{expected - len(c.log.sessions)} of {expected} session(s) missing")
    if not c.finished or c.log.stop is not None:
        out.append(f"{c.status}: {done_counts(c.log, expected)}")
    out += c.log.contradicted  # a claim the log's own calls contradict (an inspect log's model)
    if c.log.forged:  # hand-edited figures: named, and the derived ones shown instead
        out.append(f"{len(c.log.forged)} logged figure(s) are not what the runs score, and the derived ones are shown: "
                   + "; ".join(c.log.forged[:3]) + ("; ..." if len(c.log.forged) > 3 else ""))
    return out


def done_counts(log: EvalLog, expected: Optional[int]) -> str:
    """What a stopped log holds: finished sessions, runs and answered seat calls."""
    finished = sum(1 for s in log.sessions if not s.get("errored"))
    of = f" of {expected}" if expected is not None else ""
    # inspect's and vf-eval's retries say what they send (``resume_command.inspect_hint``, ``verifiers_hint``)
    resend = "" if log.spec.get("front_end") in (FRONT_END, VERIFIERS) else " (a resume sends only the others)"
    sent = f", {len(log.batches)} batch(es) sent (a resume waits for them, not sending them again)" if log.batches else ""
    return (f"{finished}{of} session(s) finished, {len({(r['session'], r['run']) for r in log.runs})} run(s) and "
            f"{log.calls} seat call(s) answered{resend}"
            f"{sent}")


def table_intervals(chosen: list[Chosen]) -> list[tuple[list[float], str, str, str]]:
    """The intervals ``table`` shows, as ``metric_interval``'s arguments (to be worked out ahead)."""
    asked = []
    for c in chosen:
        report = figures(c.log)
        for i, player in enumerate(c.players):
            keys = [metric_key(m, player, c.players) for m in METRICS]
            if i > 0 and report.get(keys[0]) is None:
                continue
            for m, k in zip(METRICS, keys):
                if isinstance(report.get(k), (int, float)):
                    asked.append((session_values(c.log, player, m), c.column, player, m))
    return asked


def table(chosen: list[Chosen]) -> str:
    header = ["player", "column"] + list(METRICS) + ["sessions", "errored", "status"]
    rows = [header]
    for c in chosen:
        report = figures(c.log)
        for i, (player, row_label) in enumerate(zip(c.players, c.labels)):
            keys = [metric_key(m, player, c.players) for m in METRICS]
            if i > 0 and report.get(keys[0]) is None:
                continue  # a player that sat nowhere in a finished session
            cells = [_with_interval(report.get(k), session_values(c.log, player, m), c.column, player, m)
                     for m, k in zip(METRICS, keys)]
            rows.append([row_label, c.column] + cells
                        + [_fmt(report.get("sessions")), _fmt(report.get("errored_sessions")),
                           c.status])
    return layout(rows)


def entries(chosen: list[Chosen]) -> list[Entry]:
    """Every row of the chosen logs, as the leaderboard takes it."""
    return [Entry(r.player, r.column, r.group, [s["eas"] for s in r.sessions],
                  {k: v["eas"] for k, v in r.by_session.items()}) for c in chosen for r in rows_of(c)]


def leaderboard_intervals(chosen: list[Chosen]) -> list[tuple[list[float], str, str, str]]:
    """The cells' intervals the leaderboard shows, as ``metric_interval``'s arguments (to be worked out ahead)."""
    return [(e.eas_list, e.column, e.player, "eas") for e in entries(chosen) if e.eas_list]


def leaderboard_table(chosen: list[Chosen]) -> str:
    """The leaderboard (``leaderboard``), as report.md's Ranking has it, and its legend."""
    board = leaderboard(entries(chosen))
    if not board["rows"]:
        return "no model finished a session: no leaderboard"
    return layout(text_rows(board)) + "\n" + prose(LEADERBOARD_LEGEND.format(**board))


PROSE_WIDTH = 100  # the summary's notes under its tables: lines a terminal shows whole


def prose(text: str) -> str:
    """A note under a table, wrapped at ``PROSE_WIDTH`` (a word longer than that, a path or a column's
    label, is kept whole on a line of its own)."""
    return textwrap.fill(text, PROSE_WIDTH, break_long_words=False, break_on_hyphens=False)


def layout(rows: list[list[str]]) -> str:
    """Rows of text cells (the first the header) as aligned columns under a rule."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def tokens_table(chosen: list[Chosen], prices: Prices) -> str:
    """Tokens used per player and column, their cost at the prices given and the plan's estimate."""
    tokens = tokens_result(chosen, prices)
    if not tokens["rows"]:
        return "\ntokens used: none (every player was built in, and built-in players send no request)"
    rows = [["player", "column"] + table_head(prices)]
    rows += [[player, column] + cells for r in tokens["rows"] for player, column, cells in shown_rows(r, prices)]
    rows.append(["total", ""] + total_cells(tokens["total"], prices))
    return "\n".join(["", "tokens used:", layout(rows), prose(NOTE + " " + cost_note(prices))])


def first_of_columns(chosen: list[Chosen]) -> dict[str, Chosen]:
    """The first log of each column: every log of a column holds the same sessions, one is enough for its floors."""
    first: dict[str, Chosen] = {}
    for c in chosen:
        first.setdefault(c.column, c)
    return first


NOT_COMPUTED = "not computed (no finished session)"


def legend(chosen: list[Chosen], floors_of: Optional[dict[str, dict[str, Any]]] = None) -> str:
    """One line under the table: what the columns mean, and where the EAS starts in these columns
    (``floors_of``: each column's ``floors``, if worked out already)."""
    seats = sorted({len(r["seats"]) for c in chosen for r in c.log.runs[:1]}) or [5]
    share = ", ".join(f"{1 / n:.3f}" for n in seats)
    lows: dict[str, list[float]] = {"rule_break": [], "random": []}
    nash: dict[bool, list[float]] = {True: [], False: []}  # by whether it is the column's ceiling
    for column, c in first_of_columns(chosen).items():
        column_floors = floors_of[column] if floors_of is not None else floors(c.log)
        eas = column_floors["eas"]
        for k in lows:
            if eas.get(k) is not None:
                lows[k].append(eas[k])
        if eas.get("nash") is not None:
            nash["eas" in nash_ceilings(column_floors, c.condition.self_play)].append(eas["nash"])

    def span(xs: list[float]) -> str:
        return "-" if not xs else f"{min(xs):.3f}" if max(xs) - min(xs) < 5e-4 else f"{min(xs):.3f}-{max(xs):.3f}"

    ceiling = [f"ceiling: Nash play {span(nash[True])}"] if nash[True] else []
    if nash[False]:  # against opponents a player can win more than its share: no ceiling there
        ceiling.append(f"Nash play at every seat {span(nash[False])} in arena and opponent columns, "
                       "no ceiling there (a player can win more than its share)")
    # a figure no column has (no finished session to work it out from): said so, never a bare '-'
    said = [f"{text} {span(lows[k]) if lows[k] else NOT_COMPUTED}" for k, text in (
        ("rule_break", "EAS in these columns of every answer a rule break (the zero point, no credit up to it)"),
        ("random", "floor: uniform random play"))]
    return prose(LEGEND.format(share=share) + "; ".join(said + ceiling) + " (every metric's: econarena-report).")


def columns_legend(chosen: list[Chosen]) -> str:
    """Under the table, the whole condition of each column whose label says it in a few words
    (a long value as a word or a tag); '' when every label is its whole condition."""
    said: dict[str, str] = {}
    for c in chosen:
        if c.abbreviated:
            said.setdefault(c.column, redact_text(c.condition_text))
    return "\n".join(["columns in full:"] + [f"  {label} = {text}" for label, text in said.items()]) if said else ""


def main(argv: Optional[list[str]] = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # `econarena-summary | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        args = sys.argv[1:] if argv is None else argv
        # --strict's verdict is the exit status a CI job reads, whoever closed the pipe: worked out to the end
        return _main(argv) if "--strict" in args else 0


def _main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[],
                        help=f"logs or folders (none: your logs in {EVALS_LOGS}, oaieval's default)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 if any listed log has errored or missing sessions, names as the log it "
                             "resumed from one it did not resume, or a file's first line is not JSON")
    parser.add_argument("--since", type=float, default=None, metavar="EPOCH_SECONDS",
                        help="only logs written after this time (e.g. $(date +%%s) before the run)")
    parser.add_argument("--latest", action="store_true", help=argparse.SUPPRESS)  # the default now
    parser.add_argument("--leaderboard", action="store_true",
                        help="print the leaderboard instead: one row per model, sorted by the mean EAS over the "
                             "cells, with its rank interval (as report.md's Ranking)")
    # econarena-run's: each log's own resume hint left out, the run closing with one command for all of them
    parser.add_argument("--no-resume-hints", action="store_true", help=argparse.SUPPRESS)
    add_price_options(parser)
    add_workers_option(parser)
    opts = parser.parse_args(argv)
    refused = price_problem(opts)
    if refused:
        print(f"econarena-summary: {refused}", file=sys.stderr)
        return 2
    paths = list(opts.paths)
    if not paths:  # evals' folder is everyone's: this user's logs only, and say so
        paths, said = own_logs(EVALS_LOGS)
        print(said, file=sys.stderr)
    if opts.since is not None:
        paths = [p for p in find_logs(paths) if p.stat().st_mtime >= opts.since]
    collect_less()  # hundreds of logs' events, all kept to the end: no need to look for cycles in them often
    with Workers(opts.workers) as workers:
        chosen, notes = select(paths, Progress("econarena-summary"), workers)
        # the legend's floors and the table's intervals (or the leaderboard's), worked out side by side
        # while the workers are there
        floors_asked = {} if opts.leaderboard else {
            column: workers.submit(floors, c.log) for column, c in first_of_columns(chosen).items()}
        work_out_intervals(leaderboard_intervals(chosen) if opts.leaderboard else table_intervals(chosen), workers)
        floors_of = {column: task.get() for column, task in floors_asked.items()}
    for n in notes:
        if n["status"] in ("skipped", "superseded", UNREAD):
            print(f"{n['file']}: {n['status']}: {n['why']}", file=sys.stderr)
        elif FALLBACK_NOTE in (n["why"] or ""):
            print(f"{n['file']}: {FALLBACK_NOTE}", file=sys.stderr)
    # a log none of which could be read (a format this version does not read, a worker that died on it)
    unread = [n for n in notes if n["status"] == UNREAD]
    if not chosen:
        print("no EconArena logs found in " + " ".join(map(str, opts.paths or [EVALS_LOGS])), file=sys.stderr)
        return 1
    if opts.leaderboard:
        print(leaderboard_table(chosen))
        return 0
    # a melee's roster is rated in its arena block (docs/arena.md), apart from the table of columns
    columns, arena = [c for c in chosen if not is_melee(c)], arena_section(chosen)
    if arena:
        print(prose(counts_line(len({c.log.path for c in columns}),
                                len({label for c in columns for label in c.labels}), len({c.column for c in columns}),
                                arena)))
    if columns:
        print(table(columns))
        print(legend(columns, floors_of))
        if columns_legend(columns):
            print(columns_legend(columns))
    else:
        print(prose(NO_COLUMNS))
    print(tokens_table(chosen, prices_of(opts)))
    melee = arena_text(arena)
    if melee:
        print(melee)
    problems = [(c, holes(c)) for c in chosen]
    problems = [(c, h) for c, h in problems if h]
    conflicts = [n for n in notes if n.get(CONFLICT)]
    for n in conflicts:  # which log is whose resume: a contradiction the folder holds, whichever log is used
        print(f"\n!! {n['file']}: {n[CONFLICT]}")
    for c, h in problems:
        print(f"\n!! {c.labels[0]} in {c.column} ({c.log.path}): " + "; ".join(h))
        if c.status == RUNNING:
            print("   a live run is still writing it: nothing to resume; run the summary again when it ends")
        elif c.status != "finished" and not opts.no_resume_hints:
            env = resume_env(c.log.player_settings)
            print("   " + hint(c.log.spec, str(c.log.path), env=env).replace("\n", "\n   "))
    for c in chosen:  # truncation is not irrationality: said apart from the other rule breaks
        cut = sum(int(e.get("cut_off") or 0) for e in c.log.sessions if not e.get("errored"))
        if cut:
            print(f"\n.. {c.labels[0]} in {c.column}: {cut} repl(ies) cut off at the token limit (finish_reason "
                  "'length'), scored as rule breaks: raise max_tokens (--extra_eval_params max_tokens=N) "
                  "if the model needs the room")
    for n in unread:  # in the summary's own output too, not only on stderr: its rows are missing from the table
        print(f"\n!! {n['file']}: {n['why']}")
    # a file whose first line is no JSON may be a log damaged where its run spec was: a strict caller
    # cannot tell it from a run that never happened (another tool's JSON lines are skipped and pass)
    garbled = [n for n in notes if n.get(GARBLED)]
    if (problems or unread or conflicts or garbled) and opts.strict:
        said = [f"{len(problems)} log(s) with errored or missing sessions or figures the runs do not give"] * bool(
            problems) + [f"{len(unread)} log(s) not read"] * bool(unread) + [
            f"{len(conflicts)} log(s) naming as resumed from a log they did not resume"] * bool(conflicts) + [
            f"{len(garbled)} file(s) whose first line is not JSON (a damaged log, or no log: move it out of the "
            "folder)"] * bool(garbled)
        print("econarena-summary --strict: " + "; ".join(said), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
