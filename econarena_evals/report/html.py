"""``report.html``: the report in one self-contained page, with a browser of the sessions played.

It holds what ``report.md`` holds, rendered from the same ``result`` that ``report.compute`` computes
(leaderboards with intervals, one table per component, floors, depth, bids, comparisons, rule breaks,
plots, inputs), and adds what the means cannot show: how each session went run by run, each seat's
prompt and reply, and why each rule break broke the rules.

One file, opened by double-click: CSS, script, data and plots (base64 PNG) are inline, nothing is
fetched (the CSS and the script are this package's ``static/report.css`` and ``static/report.js``),
and a Content-Security-Policy forbids fetching anything and running any script but the
page's own (by its hash). The page opens on the ranking, the leaderboard of the models, and the
tables; the session browser's data is one deflated, base64 block per column inside the page, which
the script unpacks (``DecompressionStream``) only when a reader opens that column, so that a report
of hundreds of logs stays a page of a few MB that opens at once. Model replies are untrusted text:
they travel as JSON with ``<``, ``>``, ``&`` and U+2028/2029 escaped, inside a
``<script type="application/json">`` block or a compressed block of one, and
the page sets them with ``textContent`` only, control characters made visible. Commands and error
texts pass through ``redact``. Nothing here imports evals.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import pickle
import re
import zlib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from ..core.answers import RULE_BREAK_KINDS
from ..core.redact import redact_command, redact_text
from ..games import report_labels
from ..log.evallog import EvalLog, HeldCalls
from ..log.format import metric_key
from ..log.transcripts import MAX_REPLY_CHARS, LogCalls, read_calls, transcript_sessions
from ..score.intervals import BOOTSTRAP_RESAMPLES
from ..score.metrics import COMPONENTS
from ..score.paired import format_comparison
from .analysis import (
    DEPTH_LEAD,
    DEPTH_SUMMARY_TITLE,
    DIAGNOSTIC_TITLES,
    FLOORS_NOTE,
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
from .arena import html_section as arena_html
from .leaderboard import LEGEND as LEADERBOARD_LEGEND
from .leaderboard import RANK_HEAD, cell_text, cells_text, rank_text
from .selection import Chosen
from .workers import Workers

DEFAULT_TRANSCRIPTS = 3  # sessions per log whose prompts and replies are embedded


@lru_cache(maxsize=None)
def asset(name: str) -> str:
    """A file of ``static/`` (package data: installed with the package, read from the install)."""
    return (resources.files(__package__) / "static" / name).read_text(encoding="utf-8")


def esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _fmt(mean: Optional[float], ci: Optional[Sequence[Optional[float]]] = None) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "-"
    if not ci or any(c is None or (isinstance(c, float) and math.isnan(c)) for c in ci):
        return f"{mean:.3f}"
    return f"{mean:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _num(x: Any) -> Any:
    """A number as the page shows it: at most 6 decimals, whole numbers as integers."""
    if x.__class__ is float:
        # a whole number (most of a log's actions and payoffs) is its own rounding: no decimal conversion
        if x.is_integer() and -1e15 < x < 1e15:
            return int(x)
        if x != x or x in (math.inf, -math.inf):
            return None
        r = round(x, 6)
        return int(r) if r.is_integer() and -1e15 < r < 1e15 else r
    if x.__class__ is int or isinstance(x, bool) or not isinstance(x, (int, float)):
        return x
    return _num(float(x)) if isinstance(x, float) else x


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_for_script(data: Any) -> str:
    """JSON that cannot end its ``<script>`` block or open another tag, whatever strings it holds.

    A lone surrogate (a log's "\\ud800" escape) is no character: it becomes U+FFFD, as a browser would
    show it, rather than text no UTF-8 file can hold (and that headless Chromium fails on)."""
    text = _SURROGATE.sub("\ufffd", json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False))
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


class Strings:
    """One table of the page's repeated strings (prompt lines, built-in players' reasons)."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.index: dict[str, int] = {}

    def __call__(self, s: str) -> int:
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.items)
            self.items.append(s)
        return i

    def ids(self, lines: Iterable[str]) -> list[int]:
        """``[self(s) for s in lines]``, in one call: a prompt's dozens of lines, for every kept call."""
        index, items, out = self.index, self.items, []
        for s in lines:
            i = index.get(s)
            if i is None:
                i = index[s] = len(items)
                items.append(s)
            out.append(i)
        return out


# ---- the data of the session browser ----

def _prompt(prompt: Any, strings: Strings) -> list[Any]:
    """Chat messages as [[role, [line ids]], ...], lines shared across the page."""
    messages = prompt if isinstance(prompt, list) else [{"role": "", "content": prompt}]
    out = []
    for m in messages:
        if not isinstance(m, Mapping):
            m = {"role": "", "content": m}
        content = m.get("content")
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False, default=str)
        out.append([str(m.get("role", "")), strings.ids(content.split("\n"))])
    return out


def log_data(c: Chosen, calls: LogCalls, keep: Sequence[int], strings: Strings) -> dict[str, Any]:
    """Everything the browser shows of one log: every session's grid, and the kept sessions' calls."""
    log = c.log
    head, players, sessions = _log_parts(log, list(c.players), calls, keep)
    return {"col": c.column, **head, "finished": c.finished, "players": players, "rows": list(c.players),
            "labels": list(c.labels), **_labels_part(log), "sessions": sessions, "calls": _kept_calls(calls, strings)}


def _labels_part(log: EvalLog) -> dict[str, Any]:
    labels = report_labels(log.game)
    return {"outcome": labels.outcome, "action": labels.action, "value_note": labels.seat_value_note}


def _log_parts(log: EvalLog, rows: list[str], calls: LogCalls,
               keep: Sequence[int]) -> tuple[dict[str, Any], list[str], list[dict[str, Any]]]:
    """Of one log's browser data: what comes before ``finished`` (cell to command), the players, the sessions."""
    players = list(log.players)
    pindex = {p: i for i, p in enumerate(players)}
    by_session: dict[int, list[Mapping[str, Any]]] = {}
    for event in log.runs:
        by_session.setdefault(int(event["session"]), []).append(event)
    labels = report_labels(log.game)
    sessions = []
    for s in sorted(log.sessions, key=lambda s: int(s["session"])):
        index = int(s["session"])
        events = sorted(by_session.get(index, []), key=lambda e: int(e["run"]))
        runs = []
        params: dict[str, Any] = {}
        for event in events:
            if not params:
                params = {k: _num(event[k]) for k in labels.session_params if k in event}
            values = event.get(labels.seat_values) if labels.seat_values else None
            values = values if isinstance(values, list) else None
            seats = []
            run = int(event["run"])
            for seat in event["seats"]:
                number, player = int(seat["seat"]), seat["player"]
                if player not in pindex:
                    pindex[player] = len(players)
                    players.append(str(player))
                seats.append([number, pindex[player], _num(seat["action"]), 1 if seat["valid"] else 0,
                              _num(seat["payoff"]), _num(seat["ne_action"]),
                              _num(values[number - 1]) if values and len(values) >= number else None,
                              None if seat["valid"] else calls.kinds.get((index, run, number))])
            outcome = event.get(labels.outcome) if labels.outcome else None
            runs.append([int(event["run"]), _num(outcome), [int(w) for w in event.get("winners") or []], seats])
        metrics = {}
        for p in rows:
            key = metric_key("eas", p, rows)
            if s.get(key) is not None:
                metrics[p] = _num(s[key])
        sessions.append({"s": index, "err": redact_text(s["error"]) if s.get("error") else None,
                         "errored": bool(s.get("errored")), "eas": metrics, "t": 1 if index in keep else 0,
                         "p": params, "runs": runs})
    command = ((log.spec.get("run_config") or {}).get("command")) or ""
    head = {"cell": log.cell, "game": log.game or "", "file": log.path.name,
            "command": _command(str(command)) if command else ""}
    return head, players, sessions


def _kept_calls(calls: LogCalls, strings: Strings) -> dict[str, list[Any]]:
    """The kept sessions' calls as the page holds them, their prompt lines and answer fields as ids of ``strings``."""
    kept = {}
    for (session, run, seat), call in sorted(calls.calls.items()):
        reply = call.reply
        cut = 0
        if reply is not None and len(reply) > MAX_REPLY_CHARS:
            reply, cut = reply[:MAX_REPLY_CHARS], len(reply) - MAX_REPLY_CHARS
        fields = call.fields()
        kept[f"{session}:{run}:{seat}"] = [_prompt(call.prompt, strings), reply, call.finish_reason,
                                           {k: strings(v) for k, v in fields.items() if isinstance(v, str)}, cut]
    return kept


@dataclass
class LogPiece:
    """One log's part of the session browser, made where the log is read (``log_piece``, in a worker
    process of the report), before the report knows its column: the JSON of everything but its column,
    whether it finished and its kept calls; those calls with ids of the log's own string table, which
    ``piece_text`` turns into ids of its column's; and what the rule-break counts need of its seats."""

    limit: Optional[int]  # the sessions per log whose calls were kept (``transcript_sessions``)
    keep: list[int]
    head: str  # the JSON members "cell" to "command"
    body: bytes  # the JSON members "players" to "sessions", deflated (a log's grids are most of the page)
    calls_blob: bytes  # (``_kept_calls`` with ids of its strings, the strings), pickled and deflated
    calls: LogCalls  # without its kept calls (they are in ``calls_blob``): the seats, rule-break kinds and examples

    @property
    def kept(self) -> tuple[dict[str, list[Any]], list[str]]:
        """The kept calls, with ids of the log's own string table, and that table."""
        return pickle.loads(zlib.decompress(self.calls_blob))


def _members(data: Mapping[str, Any]) -> str:
    """The JSON members of ``data`` as ``json_for_script`` writes them inside an object (no braces)."""
    return json_for_script(data)[1:-1]


def log_piece(log: EvalLog, limit: Optional[int], held: Optional[HeldCalls] = None) -> LogPiece:
    """``log``'s part of the browser (``LogPiece``): its kept calls read again from the file (those its
    reader kept, ``held``, taken from there), its grids built."""
    keep = transcript_sessions(log, limit)
    rows = log.players[:1]  # the evaluated player: ``Chosen.players``
    calls = read_calls(log, rows, keep, held)
    head, players, sessions = _log_parts(log, rows, calls, keep)
    strings = Strings()
    kept = _kept_calls(calls, strings)
    body = _members({"players": players, "rows": list(rows), "labels": [log.labels.get(p, p) for p in rows],
                     **_labels_part(log), "sessions": sessions})
    calls.calls, calls.kinds = {}, {}  # in ``kept`` and the grids now
    # deflated: a report of hundreds of logs holds every log's piece until its column is made
    return LogPiece(limit, keep, _members(head), zlib.compress(body.encode("utf-8", "surrogatepass"), 1),
                    zlib.compress(pickle.dumps((kept, strings.items), pickle.HIGHEST_PROTOCOL), 1), calls)


def piece_text(column: str, finished: bool, piece: LogPiece, strings: Strings) -> str:
    """The JSON of ``log_data`` from the log's piece, its strings added to its column's ``strings``:
    the same text, to the byte, as ``json_for_script(log_data(...))`` with the same ``strings``."""
    own_kept, own_strings = piece.kept
    ids = [strings(s) for s in own_strings]
    kept = {key: [[[role, [ids[i] for i in lines]] for role, lines in prompt], reply, reason,
                  {k: ids[i] for k, i in fields.items()}, cut]
            for key, (prompt, reply, reason, fields, cut) in own_kept.items()}
    return ('{"col":' + json_for_script(column) + "," + piece.head + ',"finished":' + json_for_script(finished)
            + "," + zlib.decompress(piece.body).decode("utf-8", "surrogatepass") + ',"calls":'
            + json_for_script(kept) + "}")


def column_block(logs: Sequence[tuple[str, bool, LogPiece]]) -> tuple[int, str]:
    """One column's block of the page: its logs' JSON (``piece_text`` of each column, finished, piece),
    with the strings they share, deflated, in base64; and the JSON's size. Each column is a block of its
    own, so the report's worker processes make the blocks side by side."""
    strings = Strings()
    texts = [piece_text(column, finished, piece, strings) for column, finished, piece in logs]
    text = '{"logs":[' + ",".join(texts) + '],"strings":' + json_for_script(strings.items) + "}"
    raw = text.encode("utf-8", "backslashreplace")
    return len(raw), base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def _command(command: str) -> str:
    """The recorded command line as a reader wants it: no secrets, and the program by its name, not its path."""
    words = redact_command(command).split(" ", 1)
    return " ".join([Path(words[0]).name] + words[1:])


class Browser:
    """The session browser's data: a small index of the logs (its pickers' columns and rows), and
    each column's logs (every session's grid, the kept sessions' calls, the strings they share) as
    one compressed block, which the page unpacks when a reader opens that column."""

    def __init__(self, workers: Optional[Workers] = None) -> None:
        self.index: list[dict[str, Any]] = []  # per log: column, file, rows, and where its data is
        self.workers = workers if workers is not None else Workers(1)
        self._pending: list[Any] = []  # per column: ``column_block``'s answer, as ``Workers.submit`` gives it
        self._done: Optional[list[tuple[int, str]]] = None

    def add_column(self, logs: Sequence[tuple[str, bool, LogPiece]], entries: Sequence[Mapping[str, Any]]) -> None:
        """One column's logs (column, finished, piece) and their entries of the index (col, file, rows, finished)."""
        for i, entry in enumerate(entries):
            self.index.append({**entry, "block": len(self._pending), "at": i})
        self._pending.append(self.workers.submit(column_block, list(logs)))

    def _blocks(self) -> list[tuple[int, str]]:
        if self._done is None:
            self._done = [pending.get() for pending in self._pending]
            self._pending = []
        return self._done

    @property
    def blocks(self) -> list[str]:
        """Per column: base64 of the deflated JSON {"logs": [...], "strings": [...]}."""
        return [block for _, block in self._blocks()]

    @property
    def raw_bytes(self) -> int:
        """The blocks' JSON before compression."""
        return sum(size for size, _ in self._blocks())


def browser_data(chosen: Sequence[Chosen], limit: Optional[int],
                 progress: Optional[Callable[[Chosen], None]] = None,
                 workers: Optional[Workers] = None) -> tuple[Browser, dict[str, Any]]:
    """The browser's data (``Browser``) and rule breaks by player ({player: {column: {kind: n}}, examples}).

    Rule breaks are counted over every session, calls kept for the first ``limit`` sessions of each log
    (None: all). Each log's part is the one made where it was read (``EvalLog.derived["browser"]``, for
    the same ``limit``), else made here, the log read again, streaming. Each column's block is made by
    ``workers`` (None: here) once its last log is in. ``progress`` is told of each log when it is done."""
    browser = Browser(workers)
    counts: dict[str, Any] = {}
    examples: dict[str, Any] = {}
    column: list[tuple[str, bool, LogPiece]] = []
    entries: list[dict[str, Any]] = []
    for n, c in enumerate(chosen):
        if column and column[-1][0] != c.column:
            browser.add_column(column, entries)
            column, entries = [], []
        piece = c.log.derived.pop("browser", None)
        if piece is None or piece.limit != limit:
            piece = log_piece(c.log, limit)
        keep, calls = piece.keep, piece.calls
        column.append((c.column, c.finished, piece))
        entries.append({"col": c.column, "file": c.log.path.name, "rows": list(c.players), "labels": list(c.labels),
                        "finished": c.finished})
        # by the row label (the model and its endpoint), as every other table names a player
        label = dict(zip(c.players, c.labels))
        for p in c.players:
            counts.setdefault(label[p], {})[c.column] = {"seats": calls.seats.get(p, 0),
                                                         **{k: calls.counts.get((p, k), 0) for k in RULE_BREAK_KINDS}}
        for (p, kind), items in calls.examples.items():
            bucket = examples.setdefault(label.get(p, p), {}).setdefault(kind, [])
            for item in items:
                if len(bucket) < 3:
                    bucket.append({**item, "col": c.column, "log": n, "t": 1 if item["session"] in keep else 0,
                                   "player": p, "range": [_num(x) for x in item["range"]]})
        if progress is not None:
            progress(c)
    if column:
        browser.add_column(column, entries)
    return browser, {"counts": counts, "examples": examples}


# ---- the page ----

def _table(head: Sequence[str], rows: Iterable[Sequence[tuple[str, Any]]], foot: Iterable[Sequence[str]] = (),
           sortable: bool = True, cls: str = "") -> str:
    """A table; each body cell is (text, sort key). Sortable tables sort by any column on a click."""
    out = [f'<table class="{"sortable " if sortable else ""}{cls}">', "<thead><tr>"]
    out += [f'<th scope="col" tabindex="0">{esc(h)}</th>' for h in head]
    out.append("</tr></thead><tbody>")
    for row in rows:
        cells = []
        for text, key in row:
            attr = f' data-v="{esc(key)}"' if key is not None else ""
            cells.append(f"<td{attr}>{esc(text)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody>")
    foot = list(foot)
    if foot:
        out.append("<tfoot>" + "".join("<tr>" + "".join(f"<td>{esc(t)}</td>" for t in r) + "</tr>" for r in foot)
                   + "</tfoot>")
    out.append("</table>")
    return "".join(out)


def metric_table(result: Mapping[str, Any], metric: str, columns: Sequence[str], players: Sequence[str],
                 groups: Sequence[str]) -> str:
    cond = {(d["player"], d["column"]): d for d in result["conditions"]}
    overall_cols = list(groups) if metric == "eas" else []
    rows = []
    for p in players:
        row: list[tuple[str, Any]] = [(p, p)]
        for col in columns:
            d = cond.get((p, col))
            m = d["metrics"][metric] if d else None
            row.append((_fmt(m["mean"], m["ci95"]), m["mean"] if m["mean"] is not None else "") if m else ("", ""))
        for g in overall_cols:
            o = result["overall_groups"][g].get(p)
            row.append((_fmt(o["eas"], o["ci95"]), o["eas"]) if o else ("", ""))
        rows.append(row)
    foot = []
    for text, values in floor_rows(result, metric, columns):
        foot.append([text] + [_fmt(v) for v in values] + [""] * len(overall_cols))
    return _table(["player"] + list(columns) + overall_cols, rows, foot, cls="metric")


def diagnostics_html(diags: Mapping[str, Any], columns: Sequence[str] = (), players: Sequence[str] = ()) -> str:
    out = []
    for kind, by_player in sorted(diags.items()):
        title, note = DIAGNOSTIC_TITLES.get(kind, (kind, ""))
        entries = [(p, col, d) for p, cols in player_items(by_player, players) for col, d in in_order(cols, columns)]
        keys = list(entries[0][2]) if entries else []
        rows = [[(p, p), (col, col)] + [(figure(d.get(k)), _key(d.get(k))) for k in keys] for p, col, d in entries]
        out.append(f'<h2 id="diag-{esc(kind)}">{esc(title)}</h2><p>{esc(note)}</p>'
                   + _table(["player", "column"] + [diagnostic_header(k) for k in keys], rows))
    return "".join(out)


def _key(x: Any) -> Any:
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else str(x)


def comparisons_html(comps: Sequence[Mapping[str, Any]], columns: Sequence[str] = (), players: Sequence[str] = ()) -> str:
    place = {col: i for i, col in enumerate(columns)}
    rank = {p: i for i, p in enumerate(players)}

    def pair(c: Mapping[str, Any]) -> tuple[int, ...]:
        return tuple(sorted((rank.get(c["a"], len(rank)), rank.get(c["b"], len(rank)))))

    eas = sorted((c for c in comps if c["metric"] == "eas"),
                 key=lambda c: (place.get(c["column"], len(place)), pair(c), c["a"], c["b"]))
    if not eas:
        return ""
    rows = [[(c["column"], c["column"]), (f"{c['a']} − {c['b']}", f"{c['a']} {c['b']}"),
             (format_comparison(c), c["diff"] if c["diff"] is not None else ""),
             (figure(c["p_value"]), c["p_value"] if c["p_value"] is not None else "")] for c in eas]
    return ('<h2 id="comparisons">Paired comparisons</h2><p>EAS difference over the sessions both players '
            "finished, a paired bootstrap 95 % interval and a two-sided sign-flip permutation p-value (every "
            "metric: <code>report.json</code>, <code>comparisons</code>).</p>"
            + _table(["column", "A − B", "difference [95 %], p, sessions", "p"], rows))


def rule_break_html(result: Mapping[str, Any], rb: Mapping[str, Any], columns: Sequence[str] = ()) -> str:
    errors = []
    place = {col: i for i, col in enumerate(columns)}
    players = players_of(result)
    rank = {p: i for i, p in enumerate(players)}
    for d in sorted(result["conditions"], key=lambda d: (rank[d["player"]], place.get(d["column"], len(place)))):
        rate = d["rule_break_rate"]
        errors.append([(d["player"], d["player"]), (d["column"], d["column"]), (str(d["sessions"]), d["sessions"]),
                       (str(d["errored_sessions"]), d["errored_sessions"]),
                       (f"{rate:.3f}" if rate is not None else "-", rate if rate is not None else ""),
                       (f"{d['tokens_per_session']:,.0f}" if d["tokens_per_session"] is not None else "-",
                        d["tokens_per_session"] if d["tokens_per_session"] is not None else "")])
    kinds_rows = []
    for p, cols in player_items(rb["counts"], players):
        total = {k: sum(c[k] for c in cols.values()) for k in RULE_BREAK_KINDS}
        seats = sum(c["seats"] for c in cols.values())
        broken = sum(total.values())
        kinds_rows.append([(p, p), (str(seats), seats), (str(broken), broken)]
                          + [(str(total[k]), total[k]) for k in RULE_BREAK_KINDS])
    return ('<h2 id="rule-breaks">Rule breaks, errors and tokens</h2>'
            + _table(["player", "column", "sessions", "errored sessions", "rule-break rate", "tokens per session"],
                     errors)
            + '<h3>Rule breaks by kind</h3><p>Every seat of every session, kind read from the reply by the '
              "eval's own parser: <em>no JSON object</em> (no object with <code>choice</code>), <em>not a "
              "number</em>, <em>out of range</em>, <em>cut off at token limit</em> (the endpoint said "
              "<code>finish_reason</code> = length), <em>no answer or error</em> (no reply on record).</p>"
            + _table(["player", "seats", "rule breaks"] + list(RULE_BREAK_KINDS), kinds_rows, cls="kinds")
            + '<h3>Example replies</h3><div id="rb-examples"><p class="note">(the page script shows them)</p></div>')


def plots_html(out: Path, plots: Mapping[str, Any]) -> str:
    parts = ['<h2 id="plots">Plots</h2>', '<div class="plots">']
    for name in plots:  # drawn in the columns' order (``compute.cell_figures``), every table's
        path = out / name
        try:
            data = base64.b64encode(path.read_bytes()).decode("ascii")
        except OSError:
            continue
        parts.append(f'<figure><img alt="{esc(name)}" src="data:image/png;base64,{data}">'
                     f"<figcaption>{esc(name)}</figcaption></figure>")
    parts.append("</div>")
    return "".join(parts)


def columns_html(columns: Sequence[Mapping[str, Any]]) -> str:
    """The legend of columns: each label and the whole condition it stands for."""
    if not columns:
        return ""
    rows = [[(c["label"], None), (c["condition"], None)] for c in columns]
    return ('<h3 id="columns">Columns</h3><p>Each column\'s label and the whole condition it stands for: the eval, '
            "and what differs from the registry's defaults, every value in full (<code>report.json</code>: "
            "<code>columns</code>).</p>" + _table(["column", "condition"], rows, sortable=False, cls="columns"))


def ranking_html(board: Optional[Mapping[str, Any]]) -> str:
    """The leaderboard, first on the page: models by mean EAS over the cells, each with its rank interval."""
    if not board or not board["rows"]:
        return ""
    cols = board["columns"]
    rows = []
    for r in board["rows"]:
        rows.append([(rank_text(r), r["rank"]), (r["player"], r["player"]),
                     (cell_text({"mean": r["eas"], "ci95": r["ci95"]}), r["eas"]),
                     (cells_text(r, cols), r["columns"])]
                    + [(cell_text(r["cells"].get(c)), (r["cells"].get(c) or {}).get("mean") or "") for c in cols])
    return ('<section class="part" id="ranking-part"><h2 id="ranking">Ranking</h2><p>'
            + esc(LEADERBOARD_LEGEND.format(resamples=board["resamples"], group=board["group"])) + "</p>"
            + _table([RANK_HEAD, "player", "mean over cells", "cells"] + list(cols), rows, cls="ranking") + "</section>")


def render(result: Mapping[str, Any], out: Path, browser: Browser, rb: Mapping[str, Any],
           limit: Optional[int]) -> list[str]:
    """The page, as pieces of text to write one after the other."""
    players = players_of(result)
    columns = column_labels(result)
    groups = list(result["overall_groups"])
    logs = browser.index
    counts = esc(counts_line(len(logs), len(players), len(columns), result.get("arena") or {}))
    if not result["conditions"] and result.get("arena"):  # melee logs alone: their arena section, no empty tables
        body = ["<h1>EconArena report</h1>", f'<p class="lead">{counts}</p>', f'<p class="note">{esc(NO_COLUMNS)}</p>',
                '<nav><a href="#arena-ratings">Arena</a> <a href="#inputs">Inputs</a></nav>',
                arena_html(result.get("arena") or {}), inputs_html(result)]
    else:
        body = columns_body(result, out, players, columns, groups, counts, limit, rb) + [inputs_html(result)]
    script = asset("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    head = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            "<title>EconArena report</title><style>" + asset("report.css") + "</style></head><body>")
    data = ['<script type="application/json" id="data">{"index":' + json_for_script(browser.index) + ',"blocks":[']
    for i, block in enumerate(browser.blocks):  # base64: no character that could end the script block
        data += [',"', block, '"'] if i else ['"', block, '"']
    data.append('],"rb":' + json_for_script(rb) + ',"kinds":' + json_for_script(list(RULE_BREAK_KINDS)) + "}</script>")
    return [head, *body, *data, "<script>" + script + "</script></body></html>\n"]


def columns_body(result: Mapping[str, Any], out: Path, players: Sequence[str], columns: Sequence[str],
                 groups: Sequence[str], counts: str, limit: Optional[int], rb: Mapping[str, Any]) -> list[str]:
    """The page's parts of the columns (self-play, arena and opponent cells) and the melee tournaments."""
    # the count of what was read first, as in report.md, then the ranking
    body = ["<h1>EconArena report</h1>",
            f"<p class=\"lead\">{counts} Each figure is the mean over finished sessions with a 95 % bootstrap "
            f"interval over sessions ({BOOTSTRAP_RESAMPLES} resamples). Players are in the ranking's order in every "
            "table; click a column heading to sort by it.</p>", ranking_html(result.get("leaderboard"))]
    place = {col: i for i, col in enumerate(columns)}
    rank = {p: i for i, p in enumerate(players)}
    errored = sorted((d for d in result["conditions"] if d["errored_sessions"]),
                     key=lambda d: (rank[d["player"]], place.get(d["column"], len(place))))
    if errored:
        body.append('<p class="warn"><strong>' + esc(sum(d["errored_sessions"] for d in errored))
                    + " errored session(s)</strong> are left out of the means: "
                    + esc("; ".join(f"{d['player']} in {d['column']}: {d['errored_sessions']}" for d in errored))
                    + "</p>")
    partial = [col for col, _ in in_order({d["column"]: None for d in result["conditions"] if not d["finished"]},
                                          columns)]
    if partial:
        body.append('<p class="warn"><strong>Partial logs</strong> (the run did not finish; its finished sessions '
                    "are used): " + esc(", ".join(partial)) + "</p>")
    body.append('<nav><a href="#ranking">Ranking</a> <a href="#leaderboard">Leaderboard</a> '
                '<a href="#components">Components</a> '
                '<a href="#rule-breaks">Rule breaks</a> '
                # the arena section's link where the section is, after the rule breaks (none without it)
                + ('<a href="#arena-ratings">Arena</a> ' if result.get("arena") else "")
                + '<a href="#browser">Sessions</a> '
                '<a href="#plots">Plots</a> <a href="#inputs">Inputs</a></nav>')
    body.append('<section class="part"><h2 id="leaderboard">Leaderboard: EconArena Score (EAS)</h2>')
    body.append(metric_table(result, "eas", columns, players, groups))
    body.append(f'<p class="note">{esc(FLOORS_NOTE)}</p>')
    depth_columns, depth_rows = depth_table(result, columns)
    if depth_rows:
        body.append(f'<h3 id="depth">{esc(DEPTH_SUMMARY_TITLE)}</h3><p>{esc(DEPTH_LEAD)}</p>'
                    + _table(["player"] + depth_columns, [[(p, p)] + [(t, None) for t in texts]
                                                         for p, texts in depth_rows], cls="depth"))
    body.append(columns_html(result.get("columns") or []))
    body.append('</section><section class="part" id="components">')
    for m in COMPONENTS:
        body.append(f'<h2 id="metric-{esc(m)}">{esc(m)}</h2>' + metric_table(result, m, columns, players, []))
    body.append(diagnostics_html(result.get("diagnostics") or {}, columns, players))
    body.append(comparisons_html(result.get("comparisons") or [], columns, players))
    body.append('</section><section class="part">' + rule_break_html(result, rb, columns) + "</section>")
    body.append(arena_html(result.get("arena") or {}))
    limit_text = "every session" if limit is None else f"the first {limit} session(s) of each log"
    body.append('<section class="part" id="sessions"><h2 id="browser">Sessions</h2>'
                "<p>Pick a column, a player and a session: one row per run, one "
                f"cell per seat (its {esc('choice or bid')}, valid or the kind of rule break, payoff, and the "
                "equilibrium action). Click a cell for the seat's prompt and the model's whole reply. Prompts and "
                f"replies are embedded for {esc(limit_text)} (<code>econarena-report --transcripts N|all</code>); "
                "every session's moves are here.</p>"
                '<div class="picker"><label>column <select id="sb-col"></select></label> '
                '<label>player <select id="sb-player"></select></label> '
                '<label>session <select id="sb-session"></select></label></div>'
                '<div id="sb-info"></div><div id="sb-grid"></div><div id="sb-detail"></div></section>')
    body.append('<section class="part">' + plots_html(out, result.get("plots") or {}) + "</section>")
    return body


def inputs_html(result: Mapping[str, Any]) -> str:
    """The logs read, each with its player, status and notes."""
    inputs = [[(n.get("path") or n["file"], n.get("path") or n["file"]),
               (n.get("player") or "-", n.get("player") or ""),
               (n["status"], n["status"]), (redact_text(n["why"] or ""), None)] for n in inputs_in_order(result)]
    folder = result.get("inputs_folder")
    return ('<section class="part"><h2 id="inputs">Inputs</h2>'
            + (f"<p>Logs under <code>{esc(folder)}</code>.</p>" if folder else "")
            + _table(["log", "player", "status", "notes"], inputs) + "</section>")


def write(result: Mapping[str, Any], out: Path, browser: tuple[Browser, dict[str, Any]],
          limit: Optional[int]) -> Path:
    """Write ``out/report.html`` from ``browser_data``'s answer (the plots must already be in ``out``)."""
    data, rb = browser
    path = out / "report.html"
    # a lone surrogate from a log (a "\ud800" escape) cannot be UTF-8: it becomes a JSON escape again
    with open(path, "w", encoding="utf-8", errors="backslashreplace", newline="\n") as f:
        for part in render(result, out, data, rb, limit):
            f.write(part)
    return path


def rule_break_counts(rb: Mapping[str, Any]) -> dict[str, dict[str, dict[str, int]]]:
    """{player: {column: {seats, kind: n}}} for report.json and report.md."""
    return {p: {col: dict(c) for col, c in cols.items()} for p, cols in rb["counts"].items()}
