"""The report's figures, computed from the chosen logs; nothing here writes a file.

``compute`` gives ``report.json``'s content (leaderboards with intervals, overall figures, floors,
diagnostics, paired comparisons, rule breaks), what each cell's plots show, and the session
browser's data; ``build`` writes them (``markdown``, ``plots``, ``html``).
"""
from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from ..core.redact import redact_mapping, redact_text
from ..games import GAMES, GameReport, outcome_from_event, report_of
from ..games.protocol import Reference
from ..log.evallog import EvalLog
from ..log.format import metric_key
from ..score.intervals import (
    BOOTSTRAP_SEED,
    IntervalOf,
    is_known,
    metric_interval,
    metric_intervals,
    remember,
    rng_for,
    stratified_ci,
)
from ..score.metrics import METRICS, distance_to_ne
from . import html as report_html
from .analysis import comparisons, floors, nash_ceilings
from .leaderboard import Entry, leaderboard, player_order
from .plots import plot_file
from .prepare import cached_diagnostics
from .read_progress import Progress
from .selection import ARENA, SELF_PLAY, SELF_PLAY_TEST, Chosen
from .tokens import NO_PRICES, Prices, tokens_result
from .workers import Workers

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


@dataclass
class CellFigures:
    """What one cell's two plots show, and their file names."""

    cell: str
    game: GameReport
    series: dict[str, list[float]]  # mean distance to equilibrium by run, per legend entry
    shares: dict[str, list[float]]  # valid first-run actions as shares, per legend entry
    with_history: bool
    human: list[float]  # draws of the game's human model of first-run play
    line_refs: list[Reference]
    run_refs: list[Reference]
    convergence: str
    first_run: str
    note: str = ""  # what the plots leave out: "12 of 50 players, those with the highest EAS"


@dataclass
class Computed:
    result: dict[str, Any]  # report.json, but for "plots" (filled in as the plots are drawn)
    figures: list[CellFigures]
    browser: tuple[report_html.Browser, dict[str, Any]]  # html.browser_data's answer
    logs: int


INTERVAL_BATCHES_PER_WORKER = 4  # batches of intervals each worker is given (``work_out_intervals``)


def ask_intervals(asked: Sequence[IntervalOf], workers: Workers) -> list[tuple[list[IntervalOf], Any]]:
    """Start the intervals of ``asked`` in the workers, side by side, in batches (with one worker: none);
    ``take_intervals`` keeps them when they are needed."""
    asked = [a for a in asked if len(a[0]) >= 2 and not is_known(*a)]
    if workers.n <= 1 or not asked:
        return []
    size = -(-len(asked) // (workers.n * INTERVAL_BATCHES_PER_WORKER))
    batches = [asked[i:i + size] for i in range(0, len(asked), size)]
    return [(batch, workers.submit(metric_intervals, batch)) for batch in batches]


def take_intervals(pending: Sequence[tuple[list[IntervalOf], Any]]) -> None:
    """The intervals ``ask_intervals`` started, kept (``intervals.remember``): ``metric_interval`` answers
    them at once, as it would have worked them out."""
    for batch, task in pending:
        remember(batch, task.get())


def work_out_intervals(asked: Sequence[IntervalOf], workers: Workers) -> None:
    """``ask_intervals`` and ``take_intervals``: the intervals worked out by the workers, and kept."""
    take_intervals(ask_intervals(asked, workers))


def compute(chosen: Sequence[Chosen], notes: list[dict[str, Any]], references: Sequence[str],
            transcripts: Optional[int], prices: Prices = NO_PRICES, pairs: str = "auto",
            compare: Sequence[tuple[str, str]] = (), progress: Optional[Progress] = None,
            on_figures: Optional[Callable[[list[CellFigures]], None]] = None,
            workers: Optional[Workers] = None) -> Computed:
    """Everything the report states about the chosen logs; ``transcripts``: sessions per log whose
    prompts and replies the session browser holds (None: all); ``prices``: per million tokens, for
    the cost of the tokens used; ``pairs``: which pairs of players the paired comparisons take
    (``analysis.compared_pairs``: "auto", or "all"), ``compare`` pairs taken too; ``progress``: told
    of each log read and each row fitted; ``on_figures``: given what the plots show as soon as it is
    known, so that they can be drawn while the rest is computed; ``workers``: where the columns' floors
    and the browser's blocks are made (None: here)."""
    workers = workers if workers is not None else Workers(1)
    logs = [c.log for c in chosen]
    rows = [r for c in chosen for r in rows_of(c)]
    # floors: one log per column is enough, every log of a column holds the same sessions
    first_log = {}
    for r in rows:
        first_log.setdefault(r.column, r.chosen.log if r.chosen else None)
    floors_of = {col: workers.submit(floors, log) for col, log in sorted(first_log.items()) if log is not None}
    board = leaderboard([Entry(r.player, r.column, r.group, [s["eas"] for s in r.sessions],
                               {k: v["eas"] for k, v in r.by_session.items()}) for r in rows])
    eas_means: dict[str, list[Optional[float]]] = defaultdict(list)
    for r in rows:
        eas_means[r.player].append(_mean_eas(r) if r.sessions else None)
    order = player_order(board, eas_means)  # every table's and every plot legend's order of the players
    # the rows' intervals, worked out by the workers before they draw the plots
    intervals = ask_intervals([([s[m] for s in c.sessions if s[m] is not None], c.column, c.player, m)
                               for c in rows for m in METRICS], workers)
    figures_of_cells = cell_figures(logs, rows, references, order)
    if on_figures is not None:
        on_figures(figures_of_cells)
    players = sorted({r.player for r in rows})
    columns = list(dict.fromkeys(r.column for r in rows))  # in the eval sets' order (``selection``)
    by_key = {(r.player, r.column): r for r in rows}

    result: dict[str, Any] = {"inputs": notes, "columns": columns_legend(chosen), "players": order,
                              "conditions": [], "overall": {}, "overall_groups": {}, "plots": {}}
    take_intervals(intervals)
    for c in rows:
        metrics = {}
        for m in METRICS:
            values = [s[m] for s in c.sessions if s[m] is not None]
            metrics[m] = {"mean": round(math.fsum(values) / len(values), 12) if values else None,
                          "ci95": list(metric_interval(values, c.column, c.player, m)) if values else None}
        result["conditions"].append({
            "player": c.player, "key": c.key, "column": c.column, "cell": c.cell, "log": str(c.log), "group": c.group,
            "finished": c.finished, "status": c.chosen.status if c.chosen else ("finished" if c.finished else "partial"),
            "sessions": len(c.sessions), "errored_sessions": c.errored,
            "rule_break_rate": c.rule_breaks / c.seats if c.seats else None,
            "tokens_per_session": c.tokens, "metrics": metrics,
            "settings": redact_mapping(c.settings) if c.settings else None,
        })
    groups_present = [g for g in (SELF_PLAY, SELF_PLAY_TEST, ARENA) if any(r.group == g for r in rows)]
    for group in groups_present:
        figures = result["overall_groups"][group] = {}
        for p in players:
            samples = [[s["eas"] for s in by_key[(p, col)].sessions] for col in sorted(columns)
                       if (p, col) in by_key and by_key[(p, col)].group == group]
            means = [math.fsum(g) / len(g) for g in samples if g]
            if means:
                figures[p] = {"eas": math.fsum(means) / len(means),
                              "ci95": list(stratified_ci(samples, rng_for(group, p))),
                              "columns": len(means)}
    result["overall"] = result["overall_groups"].get(SELF_PLAY, {})

    result["floors"] = {col: pending.get() for col, pending in floors_of.items()}
    self_play = {r.column: r.chosen.condition.self_play for r in rows if r.chosen}
    result["ceilings"] = {col: nash_ceilings(f, self_play.get(col, False)) for col, f in result["floors"].items()}
    result["diagnostics"] = {}
    if progress is not None:
        progress.start("fitting each row's diagnostics (depth of reasoning, bids)", len(rows), "rows")
    for r in rows:
        if progress is not None:
            progress.step()
        if r.chosen is None:
            continue
        for kind, figures in cached_diagnostics(r.chosen.log, r.key or r.player).items():
            result["diagnostics"].setdefault(kind, {}).setdefault(r.player, {})[r.column] = figures
    result["depth"] = result["diagnostics"].get("depth", {})
    result["comparisons"], result["comparison_pairs"] = comparisons(
        {(r.player, r.column): r.by_session for r in rows}, pairs, compare, order)
    result["leaderboard"] = board
    result["tokens"] = tokens_result(chosen, prices)
    # in the report's one order too: by player (an opponent, in no row, after), then by column
    rank, place = {p: i for i, p in enumerate(order)}, {col: i for i, col in enumerate(columns)}
    result["tokens"]["rows"].sort(key=lambda t: (rank.get(t["player"], len(rank)), place.get(t["column"], len(place))))
    # what the seats said: read once, streaming; rule breaks by kind over every session
    if progress is not None:
        progress.start("reading the seats' replies", len(chosen), "logs",
                       sum(c.log.size for c in chosen))
    browser = report_html.browser_data(chosen, transcripts,
                                       None if progress is None else (lambda c: progress.step(c.log.size)), workers)
    result["rule_breaks"] = report_html.rule_break_counts(browser[1])
    for n in notes:
        n["why"] = redact_text(n["why"]) if n.get("why") else n.get("why")
    return Computed(result, figures_of_cells, browser, len(logs))


def columns_legend(chosen: Sequence[Chosen]) -> list[dict[str, Any]]:
    """report.json's ``columns``, in the report's order: each column's label and its whole condition
    (the eval, the opponents, every game and sampling arg, the seed, each player's completion args)."""
    out: dict[str, dict[str, Any]] = {}
    for c in chosen:
        if c.column in out:
            continue
        cond = c.condition
        told = cond.completion_args
        out[c.column] = {
            "label": c.column, "name": c.full_name, "condition": redact_text(c.condition_text),
            "abbreviated": c.abbreviated, "eval": cond.eval_name, "cell": cond.cell, "split": cond.split,
            "opponents": list(cond.opponents), "args": dict(cond.args), "seed": cond.seed,
            # the evaluated fn's (the column's rows were all told these), then each opponent's
            "completion_args": {"evaluated": redact_mapping(dict(told[0])) if told else {},
                                "opponents": [redact_mapping(dict(args)) for args in told[1:]]},
        }
    return list(out.values())


def cell_figures(logs: Sequence[EvalLog], rows: Sequence[Row], references: Sequence[str],
                 order: Sequence[str] = ()) -> list[CellFigures]:
    """What each cell's two plots show, for the cells whose game is known (its labels name the axes);
    ``order``: the report's order of the players, their legends' order (any other player after, by name)."""
    place = {p: i for i, p in enumerate(order)}
    out = []
    for cell in dict.fromkeys(r.cell for r in rows):  # the columns' order (``selection``), every table's
        cell_logs = [lg for lg in logs if lg.cell == cell]
        game_name = next((lg.game for lg in cell_logs if lg.runs), cell_logs[0].game if cell_logs else None)
        if game_name not in GAMES:  # a log of no known game: nothing to label its plots with
            continue
        game = report_of(game_name)
        first_runs = [r for lg in cell_logs for r in lg.runs if r["run"] == 0]
        series, shares = {}, {}
        mine = [r for r in rows if r.cell == cell]
        note = ""
        if len(mine) > PLOT_SERIES_MAX:  # a plot of 50 lines shows none of them: the best, and say so
            note = f"{PLOT_SERIES_MAX} of {len(mine)} players, those with the highest EAS"
            mine = sorted(mine, key=lambda r: (-_mean_eas(r), label(r)))[:PLOT_SERIES_MAX]
        for c in sorted(mine, key=lambda r: (place.get(r.player, len(place)), label(r))):
            log = next(lg for lg in cell_logs if lg.path == c.log)
            series[label(c)] = convergence_series(log, c.key or c.player)
            shares[label(c)] = first_run_shares(log, c.key or c.player)
        # a learning curve of another benchmark belongs only next to runs that showed history
        with_history = any(r.get("history_runs", 0) for lg in cell_logs for r in lg.runs)
        out.append(CellFigures(
            cell=cell, game=game, series=series, shares=shares, with_history=with_history,
            human=human_first_run_model(game, first_runs),
            line_refs=game.references("convergence", references) if with_history else [],
            run_refs=game.references("first_run", references),
            convergence=plot_file("convergence", cell), first_run=plot_file("first_run", cell), note=note))
    return out


PLOT_SERIES_MAX = 12  # players a plot draws at most


def _mean_eas(row: Row) -> float:
    values = [s["eas"] for s in row.sessions if s["eas"] is not None]
    return math.fsum(values) / len(values) if values else -math.inf


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
            keys = {m: metric_key(m, player, chosen.players) for m in METRICS}
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
        game = report_of(r["game"])
        for seat in r["seats"]:
            if seat["player"] != player or not seat["valid"]:
                continue
            share = game.first_run_share(r, seat)
            if share is not None:
                shares.append(share)
    return shares


def human_first_run_model(game: GameReport, first_runs: Sequence[dict[str, Any]] = (), n: int = 20000) -> list[float]:
    """Draws from econarena/human's first-run model, as shares, on the log's first runs if it needs them."""
    return game.human_first_run_shares(first_runs, random.Random(BOOTSTRAP_SEED), n)


def label(row: Row) -> str:
    """A plot legend entry: the player, and the column when it is not the plain cell."""
    return row.player if row.column == row.cell else f"{row.player}, {row.column}"


def json_safe(x: Any) -> Any:
    """NaN and infinity are not JSON: they become null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    return x
