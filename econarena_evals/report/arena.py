"""The report's arena section: the melee logs' players rated, kept apart from the self-play columns.

For each melee log the report uses (its column: the cell and what differs from the registry's
args), ``score.rating`` rates every player of the roster from the tables it finished: one entry per
player with ``player``, ``rating``, its 95 % ``interval``, ``rank`` and ``rank_interval``, the tables
and runs it played, and its metrics at the mixed tables (the log's final report); and the
head-to-head counts of every pair that met. ``markdown`` and ``html`` render the same figures.
"""
from __future__ import annotations

import html
import re
from typing import Any, Mapping, Optional, Sequence

from ..log.format import metric_key
from ..run.conditions import spec_args
from ..run.config import ENVIRONMENTS, environment, melee_args
from ..score.metrics import METRICS
from ..score.rating import ARENA_RESAMPLES, head_to_head, rate, tables_of
from .selection import Chosen

H2H_MAX_PLAYERS = 16  # a larger roster's head-to-head is in report.json only, not a table on the page
LEGEND = (f"Plackett-Luce rating over each run's ranking by payoff (log strength, the roster's mean 0; "
          f"exp(a - b): the odds that a earns more than b in a run they share), with a 95 % interval and a rank "
          f"interval from {ARENA_RESAMPLES} resamples of the tables; metrics are the means over the tables each "
          "player sat at (docs/arena.md). A heading's roster #tag (#a48811, say) is a short hash of the roster's "
          "players after the first, as the column's label in report.json names it: the same roster, the same tag.")


SECTION = "Arena: melee tournaments"  # the section's title
# where the logs are melee tournaments alone: said in place of the columns' tables, which would be empty
NO_COLUMNS = ("No log of a self-play, arena or opponent cell, so no table of columns (leaderboard, metrics, rule "
              "breaks, sessions, plots): melee tournaments alone, each rated in the arena section.")


def counts_line(logs: int, players: int, columns: int, arena: Mapping[str, Any]) -> str:
    """The report's count of what it read: ``logs`` of columns (self-play, arena and opponent cells) with
    their ``players`` and ``columns``, and the melee logs of ``arena`` (``section``), counted apart."""
    if not arena:
        return f"{logs} log(s), {players} player(s), {columns} column(s)."
    melee = sum(1 + len(entry.get("left_out") or []) for entry in arena.values())
    rated = len({p["player"] for entry in arena.values() for p in entry["players"]})
    cells = (f"{logs} of self-play, arena or opponent cells ({players} player(s), {columns} column(s))" if logs
             else "none of self-play, arena or opponent cells")
    return (f"{logs + melee} log(s): {melee} of melee tournaments ({rated} player(s) rated in {len(arena)} "
            f"tournament column(s), under {SECTION}), {cells}.")


def is_melee(c: Chosen) -> bool:
    try:
        return melee_args(spec_args(c.log.spec)) is not None
    except ValueError:
        return False


def _environment(c: Chosen) -> int:
    """A melee's place in the paper's order of environments: the whole roster, then its senior table."""
    try:
        return ENVIRONMENTS.index(environment(spec_args(c.log.spec)) or ENVIRONMENTS[0])
    except ValueError:
        return len(ENVIRONMENTS)


def section(chosen: Sequence[Chosen]) -> dict[str, Any]:
    """{column: {cell, tables, players: [entry, ...] best first, head_to_head: [...]}} of every melee log,
    in the columns' order (``selection``) but for each cell's melee before its senior table (the paper's
    order: the senior table is built from the melee's ratings)."""
    out: dict[str, Any] = {}
    cells = {cell: i for i, cell in enumerate(dict.fromkeys(c.condition.cell for c in chosen))}
    for c in sorted(chosen, key=lambda c: (cells[c.condition.cell], _environment(c))):  # stable: else as chosen
        if not is_melee(c):
            continue
        done = {int(s["session"]) for s in c.log.sessions if not s.get("errored")}
        tables = tables_of(r for r in c.log.runs if int(r["session"]) in done)
        final: Mapping[str, Any] = c.log.final_report or {}
        players = c.log.players
        entries = []
        for r in rate(tables, "arena", c.column):
            metrics = {m: final.get(metric_key(m, r.player, players)) for m in METRICS} if r.player in players else {}
            entries.append({"player": r.player, "rating": r.rating, "interval": [r.low, r.high], "rank": r.rank,
                            "rank_interval": [r.rank_low, r.rank_high], "mean_rank": r.mean_rank, "tables": r.tables, "runs": r.runs, **metrics})
        rated = {e["player"] for e in entries}
        prev = out.get(c.column)
        if prev is not None:
            # two tournaments in one column (a roster whose endpoint changed, its resume a condition
            # of its own): the one with more finished tables is rated, the other named beside it
            if len(tables) <= prev["tables"]:
                prev["left_out"].append(f"{c.log.path} ({len(tables)} tables finished)")
                continue
            left_out = prev["left_out"] + [f"{prev['log']} ({prev['tables']} tables finished)"]
        else:
            left_out = []
        out[c.column] = {
            "cell": c.condition.cell, "log": str(c.log.path), "tables": len(tables), "players": entries,
            "left_out": left_out,
            # players of the roster with no finished table (their endpoint down, say): not rated
            "unrated": [p for p in players if p not in rated],
            "errored_tables": sum(1 for s in c.log.sessions if s.get("errored")),
            "head_to_head": [{"a": a, "b": b, "runs": n, "a_earned_more": wa, "b_earned_more": wb}
                             for (a, b), (n, wa, wb) in sorted(head_to_head(tables).items())]}
    return out


_TAGGED_ROSTER = re.compile(r"^vs \d+ players #([0-9a-f]{6})$")  # ``columns._opponents_note`` of a long roster


def title(column: str, entry: Mapping[str, Any]) -> str:
    """A tournament's heading in words: 'auction_L_melee: a tournament of 8 players (roster #a48811)'.
    Its column's label names the roster by the seats after the first ('vs 7 players #a48811', the
    tag a hash of those players' names: the same roster, the same tag); said here as the roster's
    size, its tag kept as the roster's any other note of the label as it is."""
    name, _, notes = column.partition(" (")
    said = []
    for note in notes[:-1].split("; ") if notes.endswith(")") else []:
        tagged = _TAGGED_ROSTER.match(note)
        said.append(f"roster #{tagged.group(1)}" if tagged else note)
    size = len(entry["players"]) + len(entry.get("unrated") or [])
    return f"{name}: a tournament of {size} players" + (f" ({'; '.join(said)})" if said else "")


def _tables_text(entry: Mapping[str, Any]) -> str:
    n = entry["tables"]
    text = f"{n} table{'' if n == 1 else 's'} finished."
    if n == 1:  # every resample is that table again: an interval of no width, which is no certainty
        text += " One table is too few for intervals: each is that table's rating again."
    if entry.get("errored_tables"):
        text += f" {entry['errored_tables']} errored and are left out."
    if entry.get("unrated"):
        text += " Not rated (no finished table): " + ", ".join(entry["unrated"]) + "."
    if entry.get("left_out"):
        text += (" Rated from " + entry["log"] + "; another tournament of this column, with fewer finished "
                 "tables, is left out: " + ", ".join(entry["left_out"]) + ".")
    return text


def _num(x: Optional[float], digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _rows(entry: Mapping[str, Any]) -> list[list[str]]:
    return [[str(p["rank"]), p["player"], f"{p['rating']:+.3f} [{p['interval'][0]:+.3f}, {p['interval'][1]:+.3f}]",
             f"{p['rank_interval'][0]}–{p['rank_interval'][1]}", str(p["tables"]), _num(p.get("eas")),
             _num(p.get("rationality")), _num(p.get("win_rate"))] for p in entry["players"]]


HEAD = ["rank", "player", "rating [95 %]", "rank interval", "tables", "eas", "rationality", "win_rate"]


def _share(h2h: Mapping[tuple[str, str], tuple[int, int]], a: str, b: str) -> str:
    if a == b:
        return "·"
    runs, won = h2h.get((a, b), (0, 0))
    return f"{won / runs:.2f}" if runs else "–"


def _matrix(entry: Mapping[str, Any]) -> Optional[tuple[list[str], dict[tuple[str, str], tuple[int, int]]]]:
    names = [p["player"] for p in entry["players"]]
    if len(names) > H2H_MAX_PLAYERS:
        return None
    h2h: dict[tuple[str, str], tuple[int, int]] = {}
    for row in entry["head_to_head"]:
        h2h[(row["a"], row["b"])] = (row["runs"], row["a_earned_more"])
        h2h[(row["b"], row["a"])] = (row["runs"], row["b_earned_more"])
    return names, h2h


def markdown(arena: Mapping[str, Any]) -> str:
    """report.md's arena section ('' without a melee log)."""
    if not arena:
        return ""
    md = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    lines = ["", f"## {SECTION}", "", LEGEND, ""]
    for column, entry in arena.items():
        lines += [f"### {md(title(column, entry))}", "", _tables_text(entry), "",
                  "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
        lines += ["| " + " | ".join(md(x) for x in row) + " |" for row in _rows(entry)]
        matrix = _matrix(entry)
        if matrix is not None:
            names, h2h = matrix
            lines += ["", "Head to head: the share of the runs both played at one table in which the row's player "
                      "earned more than the column's.", "",
                      "| | " + " | ".join(md(n) for n in names) + " |", "|" + "---|" * (len(names) + 1)]
            lines += ["| " + md(a) + " | " + " | ".join(_share(h2h, a, b) for b in names) + " |" for a in names]
        else:
            lines += ["", "Head to head: in report.json (`arena`, `head_to_head`)."]
        lines.append("")
    return "\n".join(lines) + "\n"


def html_section(arena: Mapping[str, Any]) -> str:
    """report.html's arena section ('' without a melee log)."""
    if not arena:
        return ""
    esc = html.escape
    parts = ['<section class="part" id="arena"><h2 id="arena-ratings">' + esc(SECTION) + "</h2>",
             f"<p>{esc(LEGEND)}</p>"]
    for column, entry in arena.items():
        parts.append(f"<h3>{esc(title(column, entry))}</h3><p>{esc(_tables_text(entry))}</p><table><thead><tr>"
                     + "".join(f"<th>{esc(h)}</th>" for h in HEAD) + "</tr></thead><tbody>")
        parts += ["<tr>" + "".join(f"<td>{esc(x)}</td>" for x in row) + "</tr>" for row in _rows(entry)]
        parts.append("</tbody></table>")
        matrix = _matrix(entry)
        if matrix is not None:
            names, h2h = matrix
            parts.append("<p>Head to head: the share of the runs both played at one table in which the row's player "
                         "earned more than the column's.</p><table><thead><tr><th></th>"
                         + "".join(f"<th>{esc(n)}</th>" for n in names) + "</tr></thead><tbody>")
            parts += ["<tr><th>" + esc(a) + "</th>" + "".join(f"<td>{_share(h2h, a, b)}</td>" for b in names)
                      + "</tr>" for a in names]
            parts.append("</tbody></table>")
        else:
            parts.append("<p>Head to head: in report.json (<code>arena</code>, <code>head_to_head</code>).</p>")
    parts.append("</section>")
    return "".join(parts)


def text(arena: Mapping[str, Any]) -> str:
    """``econarena-summary``'s arena block: each melee column's players, best first, as plain columns."""
    out = []
    for column, entry in arena.items():
        rows = [HEAD] + _rows(entry)
        widths = [max(len(r[i]) for r in rows) for i in range(len(HEAD))]
        out += ["", f"arena {column}: {_tables_text(entry)}"]
        out += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(out + ([LEGEND] if out else []))
