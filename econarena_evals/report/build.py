"""``econarena-report LOG_OR_DIR... --out DIR``: leaderboards and plots from evals logs.

Reads any number of evals JSONL logs (models x cells, self-play and arena), keeps the EconArena
ones, and writes ``report.md``, ``report.json``, ``convergence_<cell>.png`` and
``first_run_<cell>.png``. A log that is partial, holds errored sessions or comes from another eval
is reported as such (which file, and why), never a crash.

Logs are keyed by their condition (contract §9; ``selection``): one column per condition, named
by cell plus what differs from the registry's defaults; a finished log beats a partial one, the
newest finished wins, and every log not used is listed with its reason. The overall figures average
default-condition columns only, self-play and arena apart. Nothing here imports evals or needs a key.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from ..core.answers import RULE_BREAK_KINDS
from ..core.redact import redact_mapping, redact_text
from ..core.references import load_references
from ..fns.fnsettings import is_builtin, show_value
from ..games import GAMES, Game, outcome_from_event
from ..games import get as get_game
from ..games.protocol import Reference
from ..log.evallog import EvalLog
from ..score.intervals import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, metric_interval, rng_for, stratified_ci
from ..score.metrics import COMPONENTS, METRICS, distance_to_ne
from ..score.paired import format_comparison
from . import html as report_html
from .analysis import DIAGNOSTIC_TITLES, comparisons, diagnostics, figure, floors
from .selection import ARENA, SELF_PLAY, SELF_PLAY_TEST, Chosen, select

HUMAN_COLOUR = "#7f007f"  # the human reference line; players take matplotlib's colour cycle
# Published series of other benchmarks: greys, so they never pass for a player here, each with its
# own dash pattern and marker so that four of them can be told apart, and labelled on the plot.
REFERENCE_GREYS = ("#303030", "#606060", "#8a8a8a", "#b0b0b0")
REFERENCE_DASHES = ((0, (1, 1.5)), (0, (5, 2)), (0, (6, 2, 1, 2)), (0, (2, 3)))
REFERENCE_MARKERS = ("^", "s", "D", "v")


def _reference_style(i: int) -> dict[str, Any]:
    return {"color": REFERENCE_GREYS[i % 4], "linestyle": REFERENCE_DASHES[i % 4], "marker": REFERENCE_MARKERS[i % 4],
            "linewidth": 1.5, "markersize": 5}


def _spread(ys: Sequence[float], gap: float) -> list[float]:
    """Label heights near ``ys`` (same order), at least ``gap`` apart, so that labels do not overlap."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    out = list(ys)
    for prev, i in zip(order, order[1:]):
        out[i] = max(out[i], out[prev] + gap)
    return out


def _short(label_text: str) -> str:
    """A reference's name for a label on the plot: the model, without the setting."""
    return label_text.split(" (")[0].split(":")[0]
DEFAULT_REFERENCES = ("gpt-4o", "llama-3.1-405b", "gpt-4-0125-preview", "gemini-1.5-pro")


@dataclass
class Row:
    """One player in one column of the leaderboard: a cell, self-play or with others at the table."""

    player: str  # the row label: the model that played, and its endpoint when not the API's default
    column: str  # the condition's name: cell plus what differs from the registry defaults
    cell: str
    log: Path
    group: Optional[str] = None  # which overall figure the column counts towards, if any
    finished: bool = True  # False: a partial log (no final report), its finished sessions used
    sessions: list[dict[str, Optional[float]]] = field(default_factory=list)  # per finished session
    by_session: dict[int, dict[str, Optional[float]]] = field(default_factory=dict)  # the same, by index
    chosen: Optional[Chosen] = None
    errored: int = 0
    seats: int = 0
    rule_breaks: int = 0
    tokens: Optional[float] = None  # mean total tokens per session, from evals' usage totals
    key: str = ""  # the player's name in the log's events (metric keys, seats)
    settings: Optional[dict[str, Any]] = None  # its econarena_players entry (or the command line's)


def rows_of(chosen: Chosen) -> list[Row]:
    log = chosen.log
    out = []
    report = log.final_report or {}
    settings = {e.get("name"): e for e in log.player_settings}
    for i, (player, row_label) in enumerate(zip(chosen.players, chosen.labels)):
        row = Row(player=row_label, column=chosen.column, cell=log.cell, log=log.path, group=chosen.group,
                  finished=chosen.finished, chosen=chosen, key=player,
                  settings=settings.get(player) if log.settings else
                  (log.player_settings[i] if i < len(log.player_settings) else None))
        for s in log.sessions:
            if s.get("errored"):
                row.errored += 1 if i == 0 else 0  # counted once per session, on the evaluated player
                continue
            keys = {m: (m if i == 0 else f"{m}/{player}") for m in METRICS}
            if s.get(keys["eas"]) is not None:
                row.sessions.append({m: s.get(k) for m, k in keys.items()})
                row.by_session[int(s["session"])] = row.sessions[-1]
        for r in log.runs:
            for seat in r["seats"]:
                if seat["player"] == player:
                    row.seats += 1
                    row.rule_breaks += not seat["valid"]
        total = report.get("usage_total_tokens")
        if i == 0 and isinstance(total, (int, float)) and log.sessions:
            row.tokens = total / len(log.sessions)
        if row.seats or i == 0:  # the evaluated player is reported even when every session errored
            out.append(row)
    return out


def convergence_series(log: EvalLog, player: str) -> list[float]:
    """Mean distance to equilibrium by run index, over the player's seats in finished sessions."""
    finished = {s["session"] for s in log.sessions if not s.get("errored")}
    by_run: dict[int, list[float]] = defaultdict(list)
    for r in log.runs:
        if r["session"] not in finished:
            continue
        outcome = outcome_from_event(r)
        for seat in outcome.seats:
            if seat.player == player:
                by_run[r["run"]].append(distance_to_ne(seat, outcome.scale))
    return [math.fsum(by_run[i]) / len(by_run[i]) for i in sorted(by_run)]


def first_run_shares(log: EvalLog, player: str) -> list[float]:
    """First-run actions as the game measures them (a fraction of c_bar, or of the seat's value); valid ones."""
    shares = []
    for r in log.runs:
        if r["run"] != 0:
            continue
        game = get_game(r["game"])
        for seat in r["seats"]:
            if seat["player"] != player or not seat["valid"]:
                continue
            share = game.first_run_share(r, seat)
            if share is not None:
                shares.append(share)
    return shares


def human_first_run_model(game: Game, first_runs: Sequence[dict[str, Any]] = (), n: int = 20000) -> list[float]:
    """Draws from econarena/human's first-run model, as shares, on the log's first runs if it needs them."""
    return game.human_first_run_shares(first_runs, random.Random(BOOTSTRAP_SEED), n)


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - matplotlib is in the report extra
        raise SystemExit("econarena-report needs matplotlib: pip install 'econarena-evals[report]'") from exc
    return plt


def plot_convergence(cell: str, game: Game, series: dict[str, list[float]], path: Path,
                     references: Sequence[Reference] = (), with_history: bool = False) -> dict[str, Any]:
    """One line per player (mean d by run); where the cell shows history, the game's human series
    (people who saw each period's result) and published series of other benchmarks, each labelled.

    A cell without history gets no learning curve of people or models who saw feedback: its runs
    are ten one-shot games, and a falling reference next to them would be read as a target."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 4.4), dpi=100)
    longest = max((len(ys) for ys in series.values()), default=0)
    for player, ys in sorted(series.items()):
        if ys:  # a player whose every session errored has no line
            ax.plot(range(1, len(ys) + 1), ys, marker="o", linewidth=2, label=player)
    lines_refs = [r for r in references if r.kind == "line"] if with_history else []
    for i, ref in enumerate(lines_refs):
        ax.plot(ref.xs, ref.ys, label=ref.label, **_reference_style(i))
    if with_history and game.REPORT.human_convergence is not None:
        human_label, human_series = game.REPORT.human_convergence
        ax.plot(range(1, len(human_series) + 1), human_series, linestyle="--",
                marker="s", color=HUMAN_COLOUR, linewidth=2, label=human_label)
    elif game.REPORT.human_convergence is not None:
        ax.text(1.01, 0.0, "No history in this cell,\nso no learning curve of\npeople or models who\nsaw "
                "results is shown.", transform=ax.transAxes, ha="left", va="bottom", fontsize=8, color="grey")
    if lines_refs:  # each published model named at the end of its line, the names kept apart
        top = max([max(r.ys) for r in lines_refs] + [max(ys) for ys in series.values() if ys] + [0.1])
        heights = _spread([r.ys[-1] for r in lines_refs], 0.045 * top)
        for i, (ref, y) in enumerate(zip(lines_refs, heights)):
            ax.annotate(_short(ref.label), (ref.xs[-1], ref.ys[-1]), xytext=(ref.xs[-1] + 0.25, y),
                        textcoords="data", fontsize=7, color=REFERENCE_GREYS[i % 4], va="center",
                        arrowprops={"arrowstyle": "-", "color": REFERENCE_GREYS[i % 4], "linewidth": 0.6})
    ax.set_xlabel("run")
    ax.set_ylabel(game.REPORT.distance)
    ax.set_title(f"Convergence to equilibrium, {cell}")
    ax.set_ylim(-0.02, None)  # a player at equilibrium draws its line on d = 0: keep it in view
    if longest:
        ax.set_xlim(0.5, max([longest] + [r.xs[-1] for r in lines_refs]) + (2.2 if lines_refs else 0.5))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    plotted = {"lines": [line.get_label() for line in ax.get_lines()], "x_range": [float(x) for x in ax.get_xlim()]}
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return plotted


def ecdf(xs: Sequence[float]) -> tuple[list[float], list[float]]:
    """The empirical distribution function of ``xs`` as step coordinates."""
    xs = sorted(xs)
    n = len(xs)
    return [0.0] + xs, [0.0] + [(i + 1) / n for i in range(n)]


def plot_first_run(cell: str, game: Game, shares: dict[str, list[float]], path: Path,
                   first_runs: Sequence[dict[str, Any]] = (), references: Sequence[Reference] = ()) -> dict[str, Any]:
    """Cumulative distribution of first-run choices, one line per player, and the human one.

    A CDF rather than a histogram: equilibrium play is a point mass that would flatten every other
    histogram, while CDFs of point masses, uniforms and mixtures read side by side.
    """
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 4.4), dpi=100)
    labels_of = game.REPORT
    right = labels_of.first_run_max  # the axis covers every share drawn (a random bid can be 3 v and more)
    for player, xs in sorted(shares.items()):
        if xs:
            ax.plot(*ecdf(xs), linewidth=2, drawstyle="steps-post", label=f"{player} (n={len(xs)})")
            right = max(right, max(xs))
    human = human_first_run_model(game, first_runs)
    if human:
        ax.plot(*ecdf(human), linewidth=2, linestyle="--", color=HUMAN_COLOUR,
                drawstyle="steps-post", label=labels_of.human)
        right = max(right, max(human))
    for i, ref in enumerate(r for r in references if r.kind in ("cdf", "vline")):
        style = _reference_style(i)
        if ref.kind == "cdf":
            ax.plot(ref.xs, ref.ys, label=ref.label, **style)
            # the name where the curve passes its own height (one per model), so that four names do not collide
            level = 0.2 + 0.17 * (i % 4)
            k = next((j for j, y in enumerate(ref.ys) if y >= level), len(ref.ys) - 1)
            ax.annotate(_short(ref.label), (ref.xs[k], ref.ys[k]), xytext=(7, -3), textcoords="offset points",
                        fontsize=7, color=style["color"], va="top",
                        bbox={"boxstyle": "round,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})
            right = max(right, max(ref.xs))
        else:
            ax.axvline(ref.xs[0], label=ref.label, **{k: v for k, v in style.items() if not k.startswith("marker")})
            ax.text(ref.xs[0], 1.0 - 0.06 * i, " " + _short(ref.label), color=style["color"], fontsize=7,
                    va="top")
            right = max(right, ref.xs[0])
    if labels_of.human_marker is not None:
        x, text = labels_of.human_marker
        ax.axvline(x, color="grey", linestyle=":", linewidth=1)
        ax.text(x, 0.02, " " + text, color="grey", fontsize=8)
    ax.set_xlabel(labels_of.first_run)
    ax.set_ylabel("share of first-run choices at or below x")
    ax.set_title(f"First-run choices, {cell}")
    ax.set_xlim(-0.01 * right, right * 1.02)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    plotted = {"lines": [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")],
               "x_range": [float(x) for x in ax.get_xlim()]}
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return plotted


# Markdown's own characters that can start markup mid-line: code, emphasis, links and images,
# attribute blocks, headings, table cell breaks, strikethrough. A "_" inside a word (beauty_L) is
# no emphasis in CommonMark and stays as it is, so that report.md stays readable as plain text.
_MD_MARKUP = re.compile(r"[\\`*\[\]{}#|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_MD_LINE_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]+")


def md(text: Any) -> str:
    """A string report.md did not write (anything read from a log: a player, fn, model, endpoint,
    completion arg, eval or column name, a file name, an error) as Markdown text that every
    renderer shows as itself: HTML's characters as entities, Markdown's backslash-escaped, line
    breaks as spaces (a table row is one line)."""
    text = _MD_LINE_BREAKS.sub(" ", str(text))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_MARKUP.sub(lambda m: "\\" + m.group(0), text)


def md_row(cells: Sequence[str]) -> str:
    """A table row of cells already made Markdown (``md`` for what came from a log)."""
    return "| " + " | ".join(cells) + " |"


def plot_file(kind: str, cell: str) -> str:
    """A plot's file name in ``--out``: the cell comes from the log, so only plain characters of
    it are used (a "/" or ".." would write outside the report's directory)."""
    return f"{kind}_{re.sub(r'[^A-Za-z0-9_.-]', '_', cell)}.png"


def label(row: Row) -> str:
    """A plot legend entry: the player, and the column when it is not the plain cell."""
    return row.player if row.column == row.cell else f"{row.player}, {row.column}"


def _fmt(mean: Optional[float], ci: Optional[tuple[float, float]] = None) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "-"
    if ci is None or any(math.isnan(c) for c in ci):
        return f"{mean:.3f}"
    return f"{mean:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def build(paths: Sequence[Path], out: Path, references: Sequence[str] = DEFAULT_REFERENCES,
          transcripts: Optional[int] = report_html.DEFAULT_TRANSCRIPTS,
          selected: Optional[tuple[list[Chosen], list[dict[str, Any]]]] = None) -> dict[str, Any]:
    """Write report.md, report.json, the plots and report.html into ``out``; ``transcripts``: sessions per
    log whose prompts and replies report.html embeds (None: all); ``selected``: ``select(paths)``, if
    the caller has read the logs already."""
    out.mkdir(parents=True, exist_ok=True)
    chosen, notes = selected if selected is not None else select(paths)
    logs = [c.log for c in chosen]
    rows = [r for c in chosen for r in rows_of(c)]
    players = sorted({r.player for r in rows})
    columns = sorted({r.column for r in rows})
    by_key = {(r.player, r.column): r for r in rows}

    result: dict[str, Any] = {"inputs": notes, "conditions": [], "overall": {}, "overall_groups": {}, "plots": {}}
    for c in rows:
        metrics = {}
        for m in METRICS:
            values = [s[m] for s in c.sessions if s[m] is not None]
            metrics[m] = {"mean": round(math.fsum(values) / len(values), 12) if values else None,
                          "ci95": list(metric_interval(values, c.column, c.player, m)) if values else None}
        result["conditions"].append({
            "player": c.player, "column": c.column, "cell": c.cell, "log": str(c.log), "group": c.group,
            "finished": c.finished, "status": c.chosen.status if c.chosen else ("finished" if c.finished else "partial"),
            "sessions": len(c.sessions), "errored_sessions": c.errored,
            "rule_break_rate": c.rule_breaks / c.seats if c.seats else None,
            "tokens_per_session": c.tokens, "metrics": metrics,
            "settings": redact_mapping(c.settings) if c.settings else None,
        })
    cond_json = {(d["player"], d["column"]): d for d in result["conditions"]}
    groups_present = [g for g in (SELF_PLAY, SELF_PLAY_TEST, ARENA) if any(r.group == g for r in rows)]
    for group in groups_present:
        figures = result["overall_groups"][group] = {}
        for p in players:
            samples = [[s["eas"] for s in by_key[(p, col)].sessions] for col in columns
                       if (p, col) in by_key and by_key[(p, col)].group == group]
            means = [math.fsum(g) / len(g) for g in samples if g]
            if means:
                figures[p] = {"eas": math.fsum(means) / len(means),
                              "ci95": list(stratified_ci(samples, rng_for(group, p))),
                              "columns": len(means)}
    result["overall"] = result["overall_groups"].get(SELF_PLAY, {})

    # floors: one log per column is enough, every log of a column holds the same sessions
    first_log = {}
    for r in rows:
        first_log.setdefault(r.column, r.chosen.log if r.chosen else None)
    result["floors"] = {col: floors(log) for col, log in sorted(first_log.items()) if log is not None}
    result["diagnostics"] = {}
    for r in rows:
        if r.chosen is None:
            continue
        for kind, figures in diagnostics(r.chosen.log, r.key or r.player).items():
            result["diagnostics"].setdefault(kind, {}).setdefault(r.player, {})[r.column] = figures
    result["depth"] = result["diagnostics"].get("depth", {})
    result["comparisons"] = comparisons({(r.player, r.column): r.by_session for r in rows})
    # what the seats said: read once, streaming; rule breaks by kind over every session
    browser = report_html.browser_data(chosen, transcripts)
    result["rule_breaks"] = report_html.rule_break_counts(browser[1])
    for n in notes:
        n["why"] = redact_text(n["why"]) if n.get("why") else n.get("why")

    errored_rows = [d for d in result["conditions"] if d["errored_sessions"]]
    lines = ["# EconArena report", ""]
    if errored_rows:
        total = sum(d["errored_sessions"] for d in errored_rows)
        lines += [f"> **{total} errored session(s)** are left out of the means: "
                  + "; ".join(f"{md(d['player'])} in {md(d['column'])}: {d['errored_sessions']}"
                              for d in errored_rows)
                  + " (see *Rule breaks, errors and tokens*).", ""]
    partial_rows = [d for d in result["conditions"] if d["status"] not in ("finished", "errored")]
    if partial_rows:
        lines += ["> **Stopped or partial logs** (the run did not finish; their finished sessions are used): "
                  + "; ".join(sorted({f"{md(d['column'])} ({md(Path(d['log']).name)}: {md(d['status'])})" for d in partial_rows})),
                  ""]
    lines += [f"{len(logs)} log(s), {len(players)} player(s), {len(columns)} column(s). Each figure is the mean over "
              "finished sessions with a 95 % bootstrap interval over sessions "
              f"({BOOTSTRAP_RESAMPLES} resamples). A column is one condition: the cell, `.test` for the test "
              "split, and in brackets the arena roster and every arg that differs from the registry's defaults. "
              f"*{SELF_PLAY}* is the mean of a player's default self-play columns (dev split), its interval from "
              f"resampling sessions within each column; *{SELF_PLAY_TEST}* the same over test-split columns and "
              f"*{ARENA}* over default arena and opponent columns. Columns with other args are in no overall.", ""]

    def table(metric: str) -> list[str]:
        overall_cols = groups_present if metric == "eas" else []
        head = ["player"] + [md(c) for c in columns] + overall_cols
        rows_md = [md_row(head), "|" + "---|" * len(head)]
        for p in players:
            cells = []
            for col in columns:
                d = cond_json.get((p, col))
                m = d["metrics"][metric] if d else None
                cells.append(_fmt(m["mean"], tuple(m["ci95"] or (math.nan, math.nan))) if m else "")
            for group in overall_cols:
                o = result["overall_groups"][group].get(p)
                cells.append(_fmt(o["eas"], tuple(o["ci95"])) if o else "")
            rows_md.append(md_row([md(p)] + cells))
        for policy, text in (("rule_break", "*floor: always breaks the rules*"),
                             ("random", "*floor: uniform random*"), ("nash", "*ceiling: Nash play*")):
            cells = [_fmt((result["floors"].get(col) or {}).get(metric, {}).get(policy)) for col in columns]
            rows_md.append(md_row([text] + cells + [""] * len(overall_cols)))
        return rows_md

    lines += ["## Leaderboard: EconArena Score (EAS)", ""] + table("eas") + [""]
    lines += ["Under each table, the floors and ceiling of the metric on the column's own sessions: every seat "
              "breaking the rules, playing uniformly at random over the valid range, or playing the equilibrium, "
              "scored by the game's scorer."]
    if result["depth"]:
        lines += ["Depth of reasoning τ (cognitive hierarchy, first runs; people: τ ≈ 1.5, Camerer, Ho and Chong "
                  "2004): " + "; ".join(f"{md(p)} {md(col)} τ = {d['tau']:.2f}"
                                       for p, cols in sorted(result["depth"].items())
                                       for col, d in sorted(cols.items())) + "."]
    lines += [""]
    for m in COMPONENTS:
        lines += [f"## {m}", ""] + table(m) + [""]
    lines += diagnostics_md(result["diagnostics"])
    lines += comparisons_md(result["comparisons"])
    lines += ["## Rule breaks, errors and tokens", "",
              "| player | column | sessions | errored sessions | rule-break rate | tokens per session |",
              "|---|---|---|---|---|---|"]
    for d in sorted(result["conditions"], key=lambda d: (d["player"], d["column"])):
        tokens = f"{d['tokens_per_session']:,.0f}" if d["tokens_per_session"] is not None else "-"
        rate = f"{d['rule_break_rate']:.3f}" if d["rule_break_rate"] is not None else "-"
        errored = f"**{d['errored_sessions']}**" if d["errored_sessions"] else "0"
        lines.append(md_row([md(d["player"]), md(d["column"]), str(d["sessions"]), errored, rate, tokens]))
    lines += [""] + rule_breaks_md(result["rule_breaks"])

    lines += players_md(result["conditions"])
    lines += ["", "## Plots", ""]
    for cell in sorted({r.cell for r in rows}):
        cell_logs = [lg for lg in logs if lg.cell == cell]
        game_name = next((lg.game for lg in cell_logs if lg.runs), cell_logs[0].game if cell_logs else None)
        if game_name not in GAMES:  # a log of no known game: nothing to label its plots with
            continue
        game = get_game(game_name)
        first_runs = [r for lg in cell_logs for r in lg.runs if r["run"] == 0]
        series, shares = {}, {}
        for c in (r for r in rows if r.cell == cell):
            log = next(lg for lg in cell_logs if lg.path == c.log)
            series[label(c)] = convergence_series(log, c.key or c.player)
            shares[label(c)] = first_run_shares(log, c.key or c.player)
        # a learning curve of another benchmark belongs only next to runs that showed history
        with_history = any(r.get("history_runs", 0) for lg in cell_logs for r in lg.runs)
        line_refs = game.references("convergence", references) if with_history else []
        run_refs = game.references("first_run", references)
        convergence, first_run = plot_file("convergence", cell), plot_file("first_run", cell)
        plots = ((convergence, plot_convergence(cell, game, series, out / convergence, line_refs, with_history)),
                 (first_run, plot_first_run(cell, game, shares, out / first_run, first_runs, run_refs)))
        for name, plotted in plots:
            result["plots"][name] = plotted
            lines.append(f"![{md(name)}]({name})")  # a plain file name (plot_file)
        lines.append("")

    lines += ["## Inputs", "", "| file | status | notes |", "|---|---|---|"]
    lines += [md_row([md(n["file"]), md(n["status"]), md(n["why"] or "")]) for n in notes]
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "report.json").write_text(json.dumps(_json_safe(result), indent=2, allow_nan=False), encoding="utf-8")
    report_html.write(_json_safe(result), out, browser, transcripts)
    return result


def rule_breaks_md(counts: dict[str, dict[str, dict[str, int]]]) -> list[str]:
    """Rule breaks by kind, per player and column, for the rows that have any."""
    lines = ["### Rule breaks by kind", "",
             "Read from each reply by the eval's parser, over every session (examples: `report.html`)."]
    rows = [(p, col, c) for p, cols in sorted(counts.items()) for col, c in sorted(cols.items())
            if any(c[k] for k in RULE_BREAK_KINDS)]
    if not rows:
        return lines + ["", "No rule breaks.", ""]
    lines += ["", "| player | column | seats | " + " | ".join(RULE_BREAK_KINDS) + " |",
              "|---|---|---|" + "---|" * len(RULE_BREAK_KINDS)]
    for p, col, c in rows:
        lines.append(md_row([md(p), md(col), str(c["seats"])] + [str(c[k]) for k in RULE_BREAK_KINDS]))
    return lines + [""]


def diagnostics_md(diags: dict[str, dict[str, dict[str, dict[str, Any]]]]) -> list[str]:
    """One table per kind of game diagnostic, rendered from whatever figures the game returned."""
    lines: list[str] = []
    for kind, by_player in sorted(diags.items()):
        title, note = DIAGNOSTIC_TITLES.get(kind, (kind, ""))
        entries = [(p, col, d) for p, cols in sorted(by_player.items()) for col, d in sorted(cols.items())]
        keys = list(entries[0][2]) if entries else []
        lines += [f"## {md(title)}", "", note, "", md_row(["player", "column"] + [md(k) for k in keys]),
                  "|---|---|" + "---|" * len(keys)]
        for p, col, d in entries:
            lines.append(md_row([md(p), md(col)] + [md(figure(d.get(k))) for k in keys]))
        lines.append("")
    return lines


def players_md(conditions: Sequence[dict[str, Any]]) -> list[str]:
    """Who played: each row's completion fn, model, endpoint and completion args, as the log's
    econarena_players event recorded them (or, for an older log, as its command line tells)."""
    seen: dict[tuple[str, ...], None] = {}
    for d in conditions:
        st = d.get("settings") or {}
        args = ", ".join(f"{k}={show_value(v)}" for k, v in sorted((st.get("completion_args") or {}).items()))
        source = "command line (log predates the players event)" if st.get("source") == "command" else "log"
        seen.setdefault((d["player"], st.get("cli_name") or "-", st.get("class") or "-", st.get("model") or "-",
                         st.get("base_url") or ("none: built in" if is_builtin(st.get("class"))
                                                     else "API default"), args or "-", source))
    if not seen:
        return []
    lines = ["", "## Players", "", "| player | completion fn | class | model | endpoint | completion args | from |",
             "|---|---|---|---|---|---|---|"]
    lines += [md_row([md(c) for c in cells]) for cells in sorted(seen)]
    return lines




def comparisons_md(comps: Sequence[dict[str, Any]]) -> list[str]:
    """A compact EAS table per column: A − B with its paired interval, p-value and sessions."""
    eas = [c for c in comps if c["metric"] == "eas"]
    if not eas:
        return []
    lines = ["## Paired comparisons", "",
             "EAS difference over the sessions both players finished, a paired bootstrap 95 % interval and a "
             "two-sided sign-flip permutation p-value (every metric: `report.json`, `comparisons`; one pair: "
             "`econarena-report --compare A B`).", ""]
    for column in sorted({c["column"] for c in eas}):
        lines += [f"**{md(column)}**", "", "| A − B | difference [95 %], p, sessions |", "|---|---|"]
        lines += [md_row([f"{md(c['a'])} − {md(c['b'])}", format_comparison(c)])
                  for c in eas if c["column"] == column]
        lines.append("")
    return lines


def _json_safe(x: Any) -> Any:
    """NaN and infinity are not JSON: they become null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    return x


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
    parser.add_argument("--transcripts", type=_transcripts, default=report_html.DEFAULT_TRANSCRIPTS, metavar="N",
                        help="sessions per log whose prompts and replies report.html embeds: a number, 0 for none "
                             "or 'all' (default %(default)s); its grids and rule-break counts cover every session")
    parser.add_argument("--open", action="store_true",
                        help="open report.html in the default browser (prints its path where there is none)")
    opts = parser.parse_args(argv)
    refused = out_problem(opts.out)
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
    selected = chosen, notes = select(opts.paths)
    if not chosen:  # nothing to report on: say why, and write no report of empty tables
        for n in notes:
            print(f"{n['file']}: {n['status']}{': ' + n['why'] if n['why'] else ''}", file=sys.stderr)
        print("econarena-report: no EconArena log to report on in " + " ".join(map(str, opts.paths)), file=sys.stderr)
        return 1
    result = build(opts.paths, opts.out, models, opts.transcripts, selected)
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
    return 0 if result["conditions"] else 1


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
