"""``econarena-senior REPORT --out DIR [oaieval args]``: the paper's "senior" environment, the top five
of a melee's rating played again among themselves.

It reads the ``arena`` section of an ``econarena-report`` (``report.json``, or the folder holding it),
takes the melee column's players best first (each by the completion fn the melee's command line
named it by, from its log's players event), and runs the real ``oaieval`` on the same eval (cell
and split), with the same tables per player and seed as that melee's log says, the top five as the
roster and ``environment=senior``: a condition of its own, so the report shows it as a column of
its own beside the melee. Every argument after the options goes to ``oaieval`` unchanged (a
``--registry_path`` that names the models' completion fns, say). The exit status is ``oaieval``'s.

Both files are read as hostile: bounded in size, every field typed, a bad one named in one line
(exit 2), before any call.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from ..log.format import PLAYERS_EVENT
from ..log.jsonl import iter_rows
from .config import melee_args
from .run_set import run_child

TOP = 5  # the paper's senior table: its five strongest models
MAX_REPORT_BYTES = 64 * 1024 * 1024  # a report.json of 50 players and their head-to-head is well under


class Refused(ValueError):
    """A report, a column or a log that cannot say who the top players are: one line, exit 2."""


def arena_of(path: Path) -> Mapping[str, Any]:
    """The ``arena`` section of a report.json (or of the one in a report folder), typed."""
    path = path / "report.json" if path.is_dir() else path
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_REPORT_BYTES + 1)
    except OSError as exc:
        raise Refused(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_REPORT_BYTES:
        raise Refused(f"{path}: larger than {MAX_REPORT_BYTES // 2**20} MB, no report.json of econarena-report")
    try:
        report = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise Refused(f"{path}: not JSON ({exc})") from None
    arena = report.get("arena") if isinstance(report, dict) else None
    if not isinstance(arena, dict) or not arena:
        raise Refused(f"{path}: no arena section (econarena-report of a melee log writes one)")
    return arena


def top_players(entry: Any, column: str, top: int) -> list[str]:
    """The column's first ``top`` players, best first, as the report ranks them."""
    players = entry.get("players") if isinstance(entry, dict) else None
    if not isinstance(players, list):
        raise Refused(f"arena column {column!r}: no list of players")
    names = []
    for i, p in enumerate(players):
        if not isinstance(p, dict) or not isinstance(p.get("player"), str) or not p["player"] \
                or not isinstance(p.get("rank"), int) or isinstance(p.get("rank"), bool):
            raise Refused(f"arena column {column!r}: player {i + 1} has no name or no whole-number rank")
        names.append((p["rank"], i, p["player"]))
    chosen = [name for _, _, name in sorted(names)[:top]]
    if len(chosen) < 2:
        raise Refused(f"arena column {column!r}: {len(chosen)} rated player(s); a senior table needs 2 or more")
    if len(set(chosen)) != len(chosen):
        raise Refused(f"arena column {column!r}: a player is named twice")
    return chosen


PLAYERS_WITHIN = 50  # rows of a log's head where its players event is looked for (it is the first event)


def fn_names(log: Path) -> dict[str, str]:
    """A player's name in the report -> the completion fn the command line named it by (``lab/gpt-4o``
    for ``lab/gpt-4o:gpt-4o``), from the log's players event; none for a log without one."""
    out: dict[str, str] = {}
    for n, (_, row) in enumerate(iter_rows(log)):
        data = row.get("data") if row.get("type") == PLAYERS_EVENT else None
        if isinstance(data, dict) and isinstance(data.get("players"), list):
            for p in data["players"]:
                if isinstance(p, dict) and isinstance(p.get("name"), str) and isinstance(p.get("cli_name"), str):
                    out[p["name"]] = p["cli_name"]
            break
        if n >= PLAYERS_WITHIN:
            break
    return out


def melee_of(log: Path) -> tuple[str, int, Any]:
    """(eval name, tables per player, seed) of the melee a log played, from its run spec."""
    if not log.is_file():
        raise Refused(f"{log}: the melee's log cannot be read (no such file)")
    for _, row in iter_rows(log):
        spec = row.get("spec")
        if not isinstance(spec, dict):
            break
        run_config = spec.get("run_config") if isinstance(spec.get("run_config"), dict) else {}
        eval_spec = run_config.get("eval_spec") if isinstance(run_config.get("eval_spec"), dict) else {}
        args = eval_spec.get("args") if isinstance(eval_spec.get("args"), dict) else {}
        name = spec.get("eval_name")
        try:
            per_player = melee_args(args)
        except ValueError as exc:
            raise Refused(f"{log}: {exc}") from None
        if not isinstance(name, str) or not name.startswith("econarena.") or per_player is None:
            raise Refused(f"{log}: not the log of a melee cell (econarena.<cell>_melee)")
        seed = run_config.get("seed")
        if seed is not None and (not isinstance(seed, (int, str)) or isinstance(seed, bool)):
            raise Refused(f"{log}: its seed is neither a number nor a text")
        return name, per_player, seed
    raise Refused(f"{log}: no run spec on its first line (no evals log)")


def command(report: Path, out: Path, column: Optional[str], top: int, passed: Sequence[str],
            oaieval: str = "oaieval") -> tuple[list[str], Path]:
    """The ``oaieval`` command line of the senior table, and the log it writes."""
    arena = arena_of(report)
    if column is None:
        if len(arena) > 1:
            raise Refused(f"the report has {len(arena)} arena columns: say which with --column "
                          f"({', '.join(sorted(map(str, arena)))})")
        column = next(iter(arena))
    if column not in arena:
        raise Refused(f"no arena column {column!r} in the report ({', '.join(sorted(map(str, arena)))})")
    entry = arena[column]
    roster = top_players(entry, column, top)
    log = entry.get("log") if isinstance(entry, dict) else None
    if not isinstance(log, str) or not log:
        raise Refused(f"arena column {column!r}: no log named")
    name, per_player, seed = melee_of(Path(log))
    # the report names a player as the log does (a model's fn with its model); oaieval takes the fn
    named = fn_names(Path(log))
    fns = [named.get(p, p) for p in roster]
    if len(set(fns)) != len(fns):
        raise Refused(f"arena column {column!r}: two of the top players are one completion fn with other "
                      "--completion_args; give each its own fn (a roster file) to play them again")
    roster = fns
    record = out / f"{name.split('.')[1]}.senior.jsonl"
    args = [oaieval, ",".join(roster), name, "--extra_eval_params",
            f"environment=senior,tables_per_player={per_player}", "--record_path", str(record)]
    if seed is not None:
        args += ["--seed", str(seed)]
    return args + list(passed), record


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="econarena-senior",
        description="The senior environment: the top five of a melee's rating (an econarena-report's arena "
                    "column) played again, with the real oaieval.")
    parser.add_argument("report", type=Path, help="report.json of econarena-report, or its folder")
    parser.add_argument("--out", type=Path, required=True, help="the folder the senior log is written in")
    parser.add_argument("--column", default=None, help="the arena column, when the report has several")
    parser.add_argument("--top", type=int, default=TOP, help=f"how many of the best play (default {TOP}, the paper's)")
    parser.add_argument("--dry-run", action="store_true", help="print the oaieval command line, run nothing")
    args, passed = parser.parse_known_args(argv)
    mine = [a for a in passed if a.split("=", 1)[0] in ("--record_path", "--extra_eval_params")]
    if args.top < 2 or mine:
        print(f"econarena-senior: --top must be 2 or more, got {args.top}" if args.top < 2 else
              f"econarena-senior: {mine[0].split('=', 1)[0]} is the senior run's own (the log under --out, "
              "environment=senior and the melee's tables_per_player); leave it out", file=sys.stderr)
        return 2
    # the oaieval beside this Python's, as econarena-run finds it
    oaieval = shutil.which("oaieval") or str(Path(sys.executable).with_name("oaieval"))
    try:
        line, record = command(args.report, args.out, args.column, args.top, passed, oaieval)
    except Refused as exc:
        print(f"econarena-senior: {exc}", file=sys.stderr)
        return 2
    print(f"econarena-senior: {' '.join(line)}", file=sys.stderr, flush=True)
    if args.dry_run:
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    return run_child(line, dict(os.environ))  # Ctrl-C and signals stop oaieval as they stop it alone


if __name__ == "__main__":
    sys.exit(main())
