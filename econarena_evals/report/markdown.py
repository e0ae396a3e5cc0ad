"""report.md: the report as Markdown, rendered from what ``compute`` measured.

Every string read from a log goes through ``md``, so that any renderer shows it as itself.
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Optional, Sequence

from ..core.answers import RULE_BREAK_KINDS
from ..fns.identity import is_builtin, show_value
from ..score.intervals import BOOTSTRAP_RESAMPLES
from ..score.metrics import COMPONENTS
from ..score.paired import format_comparison
from .analysis import (
    ALL_PAIRS_UP_TO,
    DEPTH_LEAD,
    DEPTH_SUMMARY_TITLE,
    DIAGNOSTIC_TITLES,
    FLOORS_NOTE,
    NEIGHBOURS,
    column_labels,
    depth_table,
    diagnostic_header,
    figure,
    floor_rows,
    in_order,
    inputs_in_order,
    player_items,
    players_of,
)
from .arena import NO_COLUMNS, counts_line
from .arena import markdown as arena_md
from .compute import CellFigures
from .leaderboard import LEGEND, text_rows
from .selection import ARENA, SELF_PLAY, SELF_PLAY_TEST
from .tokens import NO_PRICES, NOTE, SENT_BY_THIS_RUN, Prices, cost_note, shown_rows, table_head, total_cells

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


def _fmt(mean: Optional[float], ci: Optional[tuple[float, float]] = None) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "-"
    if ci is None or any(math.isnan(c) for c in ci):
        return f"{mean:.3f}"
    return f"{mean:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def render(result: dict[str, Any], figures: Sequence[CellFigures], logs: int) -> str:
    """report.md's text from ``compute``'s result (its plots drawn: ``result["plots"]``)."""
    players = players_of(result)
    columns = column_labels(result)
    groups_present = list(result["overall_groups"])
    cond_json = {(d["player"], d["column"]): d for d in result["conditions"]}
    place = {col: i for i, col in enumerate(columns)}
    rank = {p: i for i, p in enumerate(players)}
    in_report_order = sorted(result["conditions"],
                             key=lambda d: (rank[d["player"]], place.get(d["column"], len(place))))
    errored_rows = [d for d in in_report_order if d["errored_sessions"]]
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
                  + "; ".join(dict.fromkeys(
                      f"{md(d['column'])} ({md(Path(d['log']).name)}: {md(d['status'])})"
                      for d in sorted(partial_rows, key=lambda d: place.get(d["column"], len(place))))),
                  ""]
    counts = counts_line(logs, len(players), len(columns), result.get("arena") or {})
    if not result["conditions"] and result.get("arena"):  # melee logs alone: their arena section, no empty tables
        return "\n".join(lines + [counts, "", NO_COLUMNS, ""] + arena_lines(result) + inputs_md(result)) + "\n"
    lines += [counts + " Each figure is the mean over "
              "finished sessions with a 95 % bootstrap interval over sessions "
              f"({BOOTSTRAP_RESAMPLES} resamples). A column is one condition: the cell, `.test` for the test "
              "split, and in brackets the arena roster and every arg that differs from the registry's defaults, "
              "each in a few words (the whole condition: *Columns*, under the leaderboard). "
              f"*{SELF_PLAY}* is the mean of a player's default self-play columns (dev split), its interval from "
              f"resampling sessions within each column; *{SELF_PLAY_TEST}* the same over test-split columns and "
              f"*{ARENA}* over default arena and opponent columns. Columns with other args are in no overall. Players are "
              "in the ranking's order in every table.", ""]

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
        for text, values in floor_rows(result, metric, columns):
            rows_md.append(md_row([f"*{text}*"] + [_fmt(v) for v in values] + [""] * len(overall_cols)))
        return rows_md

    lines += ranking_md(result.get("leaderboard"))
    lines += ["## Leaderboard: EconArena Score (EAS)", ""] + table("eas") + [""]
    lines += [FLOORS_NOTE]
    depth_columns, depth_rows = depth_table(result, columns)
    if depth_rows:
        lines += ["", f"### {DEPTH_SUMMARY_TITLE}", "", DEPTH_LEAD, "", md_row(["player"] + [md(c) for c in depth_columns]),
                  "|" + "---|" * (len(depth_columns) + 1)]
        lines += [md_row([md(p)] + [md(t) for t in texts]) for p, texts in depth_rows]
    lines += [""] + columns_md(result.get("columns") or [])
    for m in COMPONENTS:
        lines += [f"## {m}", ""] + table(m) + [""]
    lines += diagnostics_md(result["diagnostics"], columns, players)
    lines += comparisons_md(result["comparisons"], result.get("comparison_pairs") or {}, columns, players)
    lines += ["## Rule breaks, errors and tokens", "",
              "| player | column | sessions | errored sessions | rule-break rate | tokens per session |",
              "|---|---|---|---|---|---|"]
    for d in in_report_order:
        tokens = f"{d['tokens_per_session']:,.0f}" if d["tokens_per_session"] is not None else "-"
        rate = f"{d['rule_break_rate']:.3f}" if d["rule_break_rate"] is not None else "-"
        errored = f"**{d['errored_sessions']}**" if d["errored_sessions"] else "0"
        lines.append(md_row([md(d["player"]), md(d["column"]), str(d["sessions"]), errored, rate, tokens]))
    lines += [""] + rule_breaks_md(result["rule_breaks"], columns, players)
    lines += tokens_md(result["tokens"])

    lines += players_md(result["conditions"], players)
    lines += ["", "## Plots", ""]
    for f in figures:
        for name in (f.convergence, f.first_run):
            lines.append(f"![{md(name)}]({name})")  # a plain file name (plot_file)
        lines.append("")

    return "\n".join(lines + arena_lines(result) + inputs_md(result)) + "\n"


def arena_lines(result: dict[str, Any]) -> list[str]:
    """The arena section's lines (none without a melee log): before the inputs, the report's appendix."""
    text = arena_md(result.get("arena") or {})
    return text.strip("\n").split("\n") + [""] if text else []


def inputs_md(result: dict[str, Any]) -> list[str]:
    """The logs read, each with its player, status and notes."""
    folder = result.get("inputs_folder")
    lines = ["## Inputs", ""] + ([f"Logs under {md(folder)}.", ""] if folder else [])
    lines += ["| log | player | status | notes |", "|---|---|---|---|"]
    lines += [md_row([md(n.get("path") or n["file"]), md(n.get("player") or "-"), md(n["status"]), md(n["why"] or "")])
              for n in inputs_in_order(result)]
    return lines


def columns_md(columns: Sequence[dict[str, Any]]) -> list[str]:
    """The legend of columns: each label and the whole condition it stands for."""
    if not columns:
        return []
    lines = ["### Columns", "", "Each column's label and the whole condition it stands for: the eval, and what "
             "differs from the registry's defaults, every value in full (`report.json`: `columns`).", "",
             "| column | condition |", "|---|---|"]
    lines += [md_row([md(c["label"]), md(c["condition"])]) for c in columns]
    return lines + [""]


def ranking_md(board: Optional[dict[str, Any]]) -> list[str]:
    """The leaderboard: models sorted by the mean EAS over the cells, each with its rank interval."""
    if not board or not board["rows"]:
        return []
    rows = text_rows(board)
    head = [md(c) if i >= 4 else c for i, c in enumerate(rows[0])]
    lines = ["## Ranking", "", md(LEGEND.format(resamples=board["resamples"], group=board["group"])), "",
             md_row(head), "|" + "---|" * len(head)]
    lines += [md_row([md(c) for c in r]) for r in rows[1:]]
    return lines + [""]


def tokens_md(tokens: dict[str, Any]) -> list[str]:
    """Tokens used per player and column, their cost at the prices given, beside the plan's estimate."""
    prices = Prices(**tokens["prices"]) if tokens["prices"] else NO_PRICES
    lines = ["## Tokens and cost", ""]
    if not tokens["rows"]:
        return lines + ["No tokens: every player was built in, and built-in players send no request.", ""]
    head = ["player", "column"] + table_head(prices)
    lines += [md_row(head), "|" + "---|" * len(head)]
    lines += [md_row([md(player.strip()) if player != SENT_BY_THIS_RUN else "↳ *sent by this run*", md(column)] + cells)
              for r in tokens["rows"] for player, column, cells in shown_rows(r, prices)]
    lines.append(md_row(["**total**", ""] + total_cells(tokens["total"], prices)))
    return lines + ["", NOTE + " " + cost_note(prices), ""]


def rule_breaks_md(counts: dict[str, dict[str, dict[str, int]]], columns: Sequence[str] = (),
                   players: Sequence[str] = ()) -> list[str]:
    """Rule breaks by kind, per player and column, for the rows that have any."""
    lines = ["### Rule breaks by kind", "",
             "Read from each reply by the eval's parser, over every session (examples: `report.html`)."]
    rows = [(p, col, c) for p, cols in player_items(counts, players) for col, c in in_order(cols, columns)
            if any(c[k] for k in RULE_BREAK_KINDS)]
    if not rows:
        return lines + ["", "No rule breaks.", ""]
    lines += ["", "| player | column | seats | " + " | ".join(RULE_BREAK_KINDS) + " |",
              "|---|---|---|" + "---|" * len(RULE_BREAK_KINDS)]
    for p, col, c in rows:
        lines.append(md_row([md(p), md(col), str(c["seats"])] + [str(c[k]) for k in RULE_BREAK_KINDS]))
    return lines + [""]


def diagnostics_md(diags: dict[str, dict[str, dict[str, dict[str, Any]]]], columns: Sequence[str] = (),
                   players: Sequence[str] = ()) -> list[str]:
    """One table per kind of game diagnostic, rendered from whatever figures the game returned."""
    lines: list[str] = []
    for kind, by_player in sorted(diags.items()):
        title, note = DIAGNOSTIC_TITLES.get(kind, (kind, ""))
        entries = [(p, col, d) for p, cols in player_items(by_player, players) for col, d in in_order(cols, columns)]
        keys = list(entries[0][2]) if entries else []
        lines += [f"## {md(title)}", "", note, "", md_row(["player", "column"] + [md(diagnostic_header(k)) for k in keys]),
                  "|---|---|" + "---|" * len(keys)]
        for p, col, d in entries:
            lines.append(md_row([md(p), md(col)] + [md(figure(d.get(k))) for k in keys]))
        lines.append("")
    return lines


def players_md(conditions: Sequence[dict[str, Any]], order: Sequence[str] = ()) -> list[str]:
    """Who played: each row's completion fn, model, endpoint and completion args, as the log's
    econarena_players event recorded them (or, for an older log, as its command line tells); the
    players in ``order``, the report's, as in every other table."""
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
    place = {p: i for i, p in enumerate(order)}
    lines += [md_row([md(c) for c in cells]) for cells in sorted(seen, key=lambda c: (place.get(c[0], len(place)), c))]
    return lines


def comparisons_md(comps: Sequence[dict[str, Any]], rules: Optional[dict[str, str]] = None,
                   columns: Sequence[str] = (), players: Sequence[str] = ()) -> list[str]:
    """A compact EAS table per column: A − B with its paired interval, p-value and sessions."""
    rank = {p: i for i, p in enumerate(players)}
    eas = sorted((c for c in comps if c["metric"] == "eas"),
                 key=lambda c: (sorted((rank.get(c["a"], len(rank)), rank.get(c["b"], len(rank)))), c["a"], c["b"]))
    if not eas:
        return []
    lines = ["## Paired comparisons", "",
             "EAS difference over the sessions both players finished, a paired bootstrap 95 % interval and a "
             "two-sided sign-flip permutation p-value (every metric: `report.json`, `comparisons`; one pair: "
             "`econarena-report --compare A B`).", ""]
    if any(rule == NEIGHBOURS for rule in (rules or {}).values()):
        lines += [f"In a column of more than {ALL_PAIRS_UP_TO} players, each player is compared with the next in "
                  "the column's EAS order and with the column's best (`econarena-report --comparisons all`: every "
                  "pair).", ""]
    for column, _ in in_order({c["column"]: None for c in eas}, columns):
        lines += [f"**{md(column)}**" + (f" ({NEIGHBOURS})" if (rules or {}).get(column) == NEIGHBOURS else ""), "",
                  "| A − B | difference [95 %], p, sessions |", "|---|---|"]
        lines += [md_row([f"{md(c['a'])} − {md(c['b'])}", format_comparison(c)])
                  for c in eas if c["column"] == column]
        lines.append("")
    return lines
