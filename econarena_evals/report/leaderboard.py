"""The leaderboard: one row per model, one column per cell, sorted by the mean over cells, with a rank
interval for each model (``score.ranks``). ``econarena-report`` puts it first in report.md and
report.html and in report.json (``leaderboard``); ``econarena-summary --leaderboard`` prints it.

Its cells are the columns of the report's first overall figure that has any (*overall*: default
self-play columns of the dev split; else *overall (test split)*; else *overall (arena and
opponents)*), or every column when no column has default args. A model's figure is that overall
figure, with its interval; a model that lacks some of the cells is ranked on those it has, and the
table says how many. Nothing here reads a file.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence

from ..score.intervals import BOOTSTRAP_RESAMPLES, metric_interval, rng_for, stratified_ci
from ..score.ranks import rank_intervals
from .selection import ARENA, SELF_PLAY, SELF_PLAY_TEST

EVERY_COLUMN = "every column"  # the leaderboard's group when no column has default args


class Entry:
    """One model in one column: its EAS of each finished session, in the log's order, and by session."""

    __slots__ = ("player", "column", "group", "eas_list", "eas")

    def __init__(self, player: str, column: str, group: Optional[str], eas_list: Sequence[float],
                 by_session: Mapping[int, Optional[float]]):
        self.player, self.column, self.group = player, column, group
        self.eas_list = [float(v) for v in eas_list]
        self.eas = {int(s): float(v) for s, v in by_session.items() if v is not None}


def leaderboard(entries: Sequence[Entry]) -> dict[str, Any]:
    """The leaderboard's figures (report.json's ``leaderboard``); ``rows`` best first."""
    groups = [g for g in (SELF_PLAY, SELF_PLAY_TEST, ARENA) if any(e.group == g for e in entries)]
    group = groups[0] if groups else EVERY_COLUMN
    mine = [e for e in entries if (e.group == group or group == EVERY_COLUMN)]
    columns = sorted({e.column for e in mine})  # the figures' order (their draws); shown in the entries' order
    players = sorted({e.player for e in mine})
    by_key = {(e.player, e.column): e for e in mine}
    ranks = rank_intervals({col: {e.player: e.eas for e in mine if e.column == col} for col in columns}, group)
    rows = []
    for p in players:
        cells: dict[str, Any] = {}
        samples = []
        for col in columns:
            e = by_key.get((p, col))
            if e is None:
                continue
            eas_list = e.eas_list
            samples.append(eas_list)
            if eas_list:
                cells[col] = {"mean": round(math.fsum(eas_list) / len(eas_list), 12),
                              "ci95": list(metric_interval(eas_list, col, p, "eas")), "sessions": len(eas_list)}
            else:
                cells[col] = {"mean": None, "ci95": None, "sessions": 0}
        means = [math.fsum(g) / len(g) for g in samples if g]
        if not means:
            continue
        r = ranks[p]
        # the overall figure's own interval (compute: the same draws, seeded by the group and the player)
        rows.append({"player": p, "eas": math.fsum(means) / len(means),
                     "ci95": list(stratified_ci(samples, rng_for(group, p))),
                     "rank": r["rank"], "rank_ci": [r["rank_low"], r["rank_high"]],
                     "columns": len(means), "cells": cells})
    rows.sort(key=lambda r: (-r["eas"], r["player"]))
    shown = list(dict.fromkeys(e.column for e in mine))
    return {"group": group, "columns": shown, "resamples": BOOTSTRAP_RESAMPLES, "rows": rows}


RANK_HEAD = "rank (95 % interval)"  # the ranking's first column, as the legend announces it


def rank_text(row: Mapping[str, Any]) -> str:
    """'3 (2-5)': the rank and its 95 % interval, always both ('1 (1-1)': the data put it first in
    every resample), so that the column shows what its head and the legend announce."""
    lo, hi = row["rank_ci"]
    return f"{row['rank']} ({lo}-{hi})"


def player_order(board: Optional[Mapping[str, Any]], eas_means: Mapping[str, Sequence[Optional[float]]]) -> list[str]:
    """The report's one order of players, for every table and plot legend: the leaderboard's (the
    overall EAS, best first, ties by name), then the players it leaves out (their columns count
    towards another overall figure, or none) by their mean EAS over their columns, best first, ties
    by name, and last the players with no finished session, by name. ``eas_means``: each player's
    mean EAS in each of its columns (None: no finished session there)."""
    place = {r["player"]: i for i, r in enumerate((board or {}).get("rows") or [])}

    def key(p: str) -> tuple[int, float, str]:
        means = [m for m in eas_means.get(p, ()) if m is not None]
        return place.get(p, len(place)), -(math.fsum(means) / len(means)) if means else math.inf, p

    return sorted(set(eas_means) | set(place), key=key)


def cell_text(cell: Optional[Mapping[str, Any]]) -> str:
    if not cell or cell.get("mean") is None:
        return "-"
    lo, hi = cell["ci95"]
    return f"{cell['mean']:.3f} [{lo:.3f}, {hi:.3f}]"


def cells_text(row: Mapping[str, Any], columns: Sequence[str]) -> str:
    """'10 of 10': the cells a model has figures in, of the leaderboard's."""
    return f"{row['columns']} of {len(columns)}"


LEGEND = ("Sorted by the mean EAS over the cells [95 % interval]; rank (95 % interval): 1 + the models that score "
          "more, ranked again in {resamples} resamples of the sessions (the same draw for every model of a cell); "
          "models whose rank intervals do not overlap are told apart by the data. Cells: the columns of '{group}'.")


def text_rows(board: Mapping[str, Any]) -> list[list[str]]:
    """The leaderboard as rows of text cells, the header first (the summary's table)."""
    cols = board["columns"]
    head = [RANK_HEAD, "player", "mean over cells", "cells"] + list(cols)
    out = [head]
    for r in board["rows"]:
        out.append([rank_text(r), r["player"], cell_text({"mean": r["eas"], "ci95": r["ci95"]}),
                    cells_text(r, cols)] + [cell_text(r["cells"].get(c)) for c in cols])
    return out
