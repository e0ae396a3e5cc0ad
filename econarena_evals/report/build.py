"""``econarena-report LOG_OR_DIR... --out DIR``: leaderboards and plots from evals logs.

Reads any number of evals JSONL logs (models x cells, self-play and arena), keeps the EconArena
ones, and writes ``report.md``, ``report.json``, ``convergence_<cell>.png`` and
``first_run_<cell>.png``. A log that is partial, holds errored sessions or comes from another eval
is reported as such (which file, and why), never a crash.

Logs are keyed by their condition (contract §9; ``selection``): one column per condition, named
by cell plus what differs from the registry's defaults; a finished log beats a partial one, the
newest finished wins, and every log not used is listed with its reason. The overall figures average
default-condition columns only, self-play and arena apart. Nothing here imports evals or needs a key.

This module is the command and the one place that writes: ``compute`` measures, ``markdown``,
``plots`` and ``html`` render.
"""
from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path
from typing import Any, Optional, Sequence

from ..core.references import load_references
from ..score.paired import format_comparison
from . import arena
from . import html as report_html
from .analysis import ALL_PAIRS_UP_TO
from .compute import DEFAULT_REFERENCES, CellFigures, compute, json_safe
from .markdown import render as render_markdown
from .plots import draw_convergence, draw_first_run, preload
from .prepare import read_for_report
from .read_progress import Progress
from .selection import Chosen, inputs_folder, select
from .tokens import NO_PRICES, Prices, add_price_options, price_problem, prices_of
from .workers import Workers, add_workers_option, collect_less


def build(paths: Sequence[Path], out: Path, references: Sequence[str] = DEFAULT_REFERENCES,
          transcripts: Optional[int] = report_html.DEFAULT_TRANSCRIPTS,
          selected: Optional[tuple[list[Chosen], list[dict[str, Any]]]] = None,
          prices: Prices = NO_PRICES, pairs: str = "auto", compare: Sequence[tuple[str, str]] = (),
          progress: Optional[Progress] = None, workers: Optional[Workers] = None) -> dict[str, Any]:
    """Write report.md, report.json, the plots and report.html into ``out``; ``transcripts``: sessions per
    log whose prompts and replies report.html embeds (None: all); ``selected``: ``select(paths)``, if
    the caller has read the logs already; ``prices``: per million tokens, for the cost of the tokens used;
    ``pairs`` and ``compare``: which paired comparisons (``analysis.compared_pairs``); ``progress``: where
    a long report says how far it is; ``workers``: where the logs are read and the plots drawn (None: here)."""
    out.mkdir(parents=True, exist_ok=True)
    workers = workers if workers is not None else Workers(1)
    chosen, notes = selected if selected is not None else select(
        paths, progress, workers, partial(read_for_report, transcripts=transcripts))
    drawn: list[tuple[str, Any]] = []

    def draw(figures: list[CellFigures]) -> None:
        """Each cell's two plots, drawn by the workers while the rest of the report is computed."""
        for f in figures:
            drawn.append((f.convergence, workers.submit(
                draw_convergence, f.cell, f.game.NAME, f.series, out / f.convergence, f.line_refs, f.with_history,
                f.note)))
            drawn.append((f.first_run, workers.submit(
                draw_first_run, f.cell, f.game.NAME, f.shares, out / f.first_run, f.human, f.run_refs, f.note)))

    # a melee's players are rated in the arena section, apart from the self-play columns
    computed = compute([c for c in chosen if not arena.is_melee(c)], notes, references, transcripts, prices, pairs,
                       compare, progress, on_figures=draw, workers=workers)
    result = computed.result
    result["arena"] = arena.section(chosen)
    folder = inputs_folder(paths)  # the inputs are named by their path under it
    if folder is not None:
        result["inputs_folder"] = str(folder)
    if progress is not None:
        progress.start("drawing plots", len(drawn), "cells' plots")
    for name, pending in drawn:
        result["plots"][name] = pending.get()
        if progress is not None:
            progress.step()
    (out / "report.md").write_text(render_markdown(result, computed.figures, computed.logs), encoding="utf-8")
    safe = json_safe(result)  # once: report.json is written before report.html reads it
    (out / "report.json").write_text(json.dumps(safe, indent=2, allow_nan=False), encoding="utf-8")
    report_html.write(safe, out, computed.browser, transcripts)
    return result


REPORT_FILES = ("report.json", "report.md", "report.html")  # one of them marks a directory as an earlier report


def out_problem(out: Path) -> Optional[str]:
    """Why ``--out`` must not be written into, or None. A report writes several files with fixed
    names (report.md, report.html, plots): into a new or empty directory, or over an earlier report,
    never among files of another kind (the root, a home directory, a folder of logs)."""
    real = out.expanduser().resolve()
    if real.parent == real:
        return f"--out {out}: is the root of the filesystem; give a directory of the report's own"
    if real.exists() and not real.is_dir():
        return f"--out {out}: exists and is not a directory"
    if real.is_dir():
        try:
            names = {p.name for p in real.iterdir()}
        except OSError as exc:
            return f"--out {out}: cannot be read: {exc.strerror}"
        if names and not names & set(REPORT_FILES):
            return (f"--out {out}: is a directory holding other files ({len(names)}), not an earlier report; "
                    "give a new or empty directory")
    return None


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Leaderboards and plots from EconArena eval logs.")
    parser.add_argument("paths", nargs="+", type=Path, metavar="LOG_OR_DIR")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="where the report goes: a new or empty directory, or an earlier report's")
    parser.add_argument("--references", default=",".join(DEFAULT_REFERENCES), metavar="MODELS",
                        help="published language-model series in the plots (GAMA-Bench names, comma-separated), "
                             "or 'none'; default: %(default)s")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"),
                        help="print the paired comparison of players A and B in every column they share")
    parser.add_argument("--comparisons", choices=("auto", "all"), default="auto",
                        help="which pairs of players the paired comparisons take: 'auto' (default) every pair in a "
                             f"column of up to {ALL_PAIRS_UP_TO} players, else each player with its neighbours in "
                             "the column's EAS order and with the best; 'all' every pair")
    parser.add_argument("--transcripts", type=_transcripts, default=report_html.DEFAULT_TRANSCRIPTS, metavar="N",
                        help="sessions per log whose prompts and replies report.html embeds: a number, 0 for none "
                             "or 'all' (default %(default)s); its grids and rule-break counts cover every session")
    parser.add_argument("--open", action="store_true",
                        help="open report.html in the default browser (prints its path where there is none)")
    add_price_options(parser)
    add_workers_option(parser)
    opts = parser.parse_args(argv)
    refused = out_problem(opts.out) or price_problem(opts)
    if refused:
        print(f"econarena-report: {refused}", file=sys.stderr)
        return 2
    models = [] if opts.references.strip().lower() == "none" else [
        m.strip() for m in opts.references.split(",") if m.strip()]
    known = set(load_references()["gama_bench"]["guessing_round1"]["models"]) | set(
        load_references()["gama_bench"]["auction_bid_value"]["models"])
    unknown = [m for m in models if m not in known]
    if unknown:
        parser.error(f"--references: unknown model(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    progress = Progress("econarena-report")
    collect_less()  # hundreds of logs' events, all kept to the end: no need to look for cycles in them often
    preload()  # matplotlib once, before the workers start, so that each has it
    with Workers(opts.workers) as workers:
        selected = chosen, notes = select(opts.paths, progress, workers,
                                          partial(read_for_report, transcripts=opts.transcripts))
        if not chosen:  # nothing to report on: say why, and write no report of empty tables
            for n in notes:
                print(f"{n['file']}: {n['status']}{': ' + n['why'] if n['why'] else ''}", file=sys.stderr)
            print("econarena-report: no EconArena log to report on in " + " ".join(map(str, opts.paths)),
                  file=sys.stderr)
            return 1
        result = build(opts.paths, opts.out, models, opts.transcripts, selected, prices_of(opts), opts.comparisons,
                       [tuple(opts.compare)] if opts.compare else [], progress, workers)
    if opts.compare:
        a, b = opts.compare
        pair = [c for c in result["comparisons"] if {c["a"], c["b"]} == {a, b}]
        if not pair:
            print(f"no column holds sessions of both {a} and {b}", file=sys.stderr)
            return 1
        for c in pair:
            if c["a"] != a:  # report in the order asked: A − B
                c = {**c, "a": a, "b": b, "diff": -c["diff"] if c["diff"] is not None else None,
                     "ci_low": -c["ci_high"] if c["ci_high"] is not None else None,
                     "ci_high": -c["ci_low"] if c["ci_low"] is not None else None}
            print(f"{c['column']}  {c['metric']:<15} {a} − {b} = {format_comparison(c)}")
        return 0
    for n in result["inputs"]:
        if n["status"] != "used" or n["why"]:
            print(f"{n['file']}: {n['status']}{': ' + n['why'] if n['why'] else ''}", file=sys.stderr)
    page = opts.out / "report.html"
    print(f"wrote {opts.out / 'report.md'}, {opts.out / 'report.json'}, {page} and {len(result['plots'])} plots")
    errored = sum(d["errored_sessions"] for d in result["conditions"])
    if errored:
        print(f"warning: {errored} errored session(s) left out of the means; see report.md", file=sys.stderr)
    if opts.open:
        if open_in_browser(page):
            print(f"opened {page.resolve()} in the browser")
        else:
            print(f"no browser to open it here; open this file: {page.resolve()}")
    return 0 if result["conditions"] or result.get("arena") else 1  # a melee alone is a report too


def _transcripts(text: str) -> Optional[int]:
    if text.strip().lower() == "all":
        return None
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of sessions or 'all', not {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError("a number of sessions must be 0 or more")
    return n


def open_in_browser(page: Path) -> bool:
    """Open ``page`` in the default browser where there is a desktop to show it; False where there is none
    (a Linux machine without a display: Python's fallback would be a text browser in this terminal)."""
    import os
    import webbrowser

    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False
    try:
        return bool(webbrowser.open(page.resolve().as_uri()))
    except webbrowser.Error:
        return False


if __name__ == "__main__":
    sys.exit(main())
