"""``report.html``: the report in one self-contained page, with a browser of the sessions played.

It holds what ``report.md`` holds, rendered from the same ``result`` that ``report.build`` computes
(leaderboards with intervals, one table per component, floors, depth, bids, comparisons, rule breaks,
plots, inputs), and adds what the means cannot show: how each session went run by run, each seat's
prompt and reply, and why each rule break broke the rules.

One file, opened by double-click: CSS, script, data and plots (base64 PNG) are inline, nothing is
fetched, and a Content-Security-Policy forbids fetching anything and running any script but the
page's own (by its hash). Model replies are untrusted text: they travel in a
``<script type="application/json">`` block with ``<``, ``>``, ``&`` and U+2028/2029 escaped, and
the page sets them with ``textContent`` only, control characters made visible. Commands and error
texts pass through ``redact``. Nothing here imports evals.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from ..core.answers import RULE_BREAK_KINDS
from ..core.redact import redact_command, redact_text
from ..log.transcripts import MAX_REPLY_CHARS, LogCalls, read_calls, transcript_sessions
from ..score.intervals import BOOTSTRAP_RESAMPLES
from ..score.metrics import COMPONENTS
from ..score.paired import format_comparison
from .analysis import DIAGNOSTIC_TITLES, figure
from .selection import Chosen

DEFAULT_TRANSCRIPTS = 3  # sessions per log whose prompts and replies are embedded


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
        if x != x or x in (math.inf, -math.inf):
            return None
        r = round(x, 6)
        return int(r) if r.is_integer() and -1e15 < r < 1e15 else r
    if isinstance(x, bool) or not isinstance(x, (int, float)):
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
        out.append([str(m.get("role", "")), [strings(line) for line in content.split("\n")]])
    return out


def log_data(c: Chosen, calls: LogCalls, keep: Sequence[int], strings: Strings) -> dict[str, Any]:
    """Everything the browser shows of one log: every session's grid, and the kept sessions' calls."""
    log = c.log
    players = list(log.players)
    pindex = {p: i for i, p in enumerate(players)}
    by_session: dict[int, list[Mapping[str, Any]]] = {}
    for event in log.runs:
        by_session.setdefault(int(event["session"]), []).append(event)
    sessions = []
    for s in sorted(log.sessions, key=lambda s: int(s["session"])):
        index = int(s["session"])
        events = sorted(by_session.get(index, []), key=lambda e: int(e["run"]))
        runs = []
        params: dict[str, Any] = {}
        for event in events:
            if not params:
                params = {k: _num(event[k]) for k in ("c_bar", "prize", "assets", "fee") if k in event}
            values = event.get("values") if isinstance(event.get("values"), list) else None
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
            outcome = event.get("target") if "target" in event else event.get("price")
            runs.append([int(event["run"]), _num(outcome), [int(w) for w in event.get("winners") or []], seats])
        metrics = {}
        for i, p in enumerate(c.players):
            key = "eas" if i == 0 else f"eas/{p}"
            if s.get(key) is not None:
                metrics[p] = _num(s[key])
        sessions.append({"s": index, "err": redact_text(s["error"]) if s.get("error") else None,
                         "errored": bool(s.get("errored")), "eas": metrics, "t": 1 if index in keep else 0,
                         "p": params, "runs": runs})
    kept = {}
    for (session, run, seat), call in sorted(calls.calls.items()):
        reply = call.reply
        cut = 0
        if reply is not None and len(reply) > MAX_REPLY_CHARS:
            reply, cut = reply[:MAX_REPLY_CHARS], len(reply) - MAX_REPLY_CHARS
        fields = call.fields()
        kept[f"{session}:{run}:{seat}"] = [_prompt(call.prompt, strings), reply, call.finish_reason,
                                           {k: strings(v) for k, v in fields.items() if isinstance(v, str)}, cut]
    command = ((log.spec.get("run_config") or {}).get("command")) or ""
    outcome_name = "target" if any("target" in e for e in log.runs) else "price"
    game = log.game or ""
    return {"col": c.column, "cell": log.cell, "game": game, "file": log.path.name,
            "command": _command(str(command)) if command else "", "finished": c.finished,
            "players": players, "rows": list(c.players), "outcome": outcome_name,
            "action": "choice" if game == "beauty" else "bid", "sessions": sessions, "calls": kept}


def _command(command: str) -> str:
    """The recorded command line as a reader wants it: no secrets, and the program by its name, not its path."""
    words = redact_command(command).split(" ", 1)
    return " ".join([Path(words[0]).name] + words[1:])


def browser_data(chosen: Sequence[Chosen], limit: Optional[int]) -> tuple[list[str], dict[str, Any], list[str]]:
    """The browser's logs (each as the page's JSON text, so that a large report holds compact text rather
    than Python lists), rule breaks by player ({player: {column: {kind: n}}, examples}) and strings.

    Every log is read once, streaming; rule breaks are counted over every session, calls kept for the
    first ``limit`` sessions of each log (None: all)."""
    strings = Strings()
    logs, counts, examples = [], {}, {}
    for c in chosen:
        keep = transcript_sessions(c.log, limit)
        calls = read_calls(c.log, c.players, keep)
        logs.append(json_for_script(log_data(c, calls, keep, strings)))
        for p in c.players:
            counts.setdefault(p, {})[c.column] = {"seats": calls.seats.get(p, 0),
                                                  **{k: calls.counts.get((p, k), 0) for k in RULE_BREAK_KINDS}}
        for (p, kind), items in calls.examples.items():
            bucket = examples.setdefault(p, {}).setdefault(kind, [])
            for item in items:
                if len(bucket) < 3:
                    bucket.append({**item, "col": c.column, "log": len(logs) - 1,
                                   "range": [_num(x) for x in item["range"]]})
    return logs, {"counts": counts, "examples": examples}, strings.items


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


FLOOR_ROWS = (("rule_break", "floor: always breaks the rules"), ("random", "floor: uniform random"),
              ("nash", "ceiling: Nash play"))


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
    for policy, text in FLOOR_ROWS:
        foot.append([text] + [_fmt(((result["floors"].get(col) or {}).get(metric) or {}).get(policy))
                              for col in columns] + [""] * len(overall_cols))
    return _table(["player"] + list(columns) + overall_cols, rows, foot, cls="metric")


def diagnostics_html(diags: Mapping[str, Any]) -> str:
    out = []
    for kind, by_player in sorted(diags.items()):
        title, note = DIAGNOSTIC_TITLES.get(kind, (kind, ""))
        entries = [(p, col, d) for p, cols in sorted(by_player.items()) for col, d in sorted(cols.items())]
        keys = list(entries[0][2]) if entries else []
        rows = [[(p, p), (col, col)] + [(figure(d.get(k)), _key(d.get(k))) for k in keys] for p, col, d in entries]
        out.append(f'<h2 id="diag-{esc(kind)}">{esc(title)}</h2><p>{esc(note)}</p>'
                   + _table(["player", "column"] + keys, rows))
    return "".join(out)


def _key(x: Any) -> Any:
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else str(x)


def comparisons_html(comps: Sequence[Mapping[str, Any]]) -> str:
    eas = [c for c in comps if c["metric"] == "eas"]
    if not eas:
        return ""
    rows = [[(c["column"], c["column"]), (f"{c['a']} − {c['b']}", f"{c['a']} {c['b']}"),
             (format_comparison(c), c["diff"] if c["diff"] is not None else ""),
             (figure(c["p_value"]), c["p_value"] if c["p_value"] is not None else "")] for c in eas]
    return ('<h2 id="comparisons">Paired comparisons</h2><p>EAS difference over the sessions both players '
            "finished, a paired bootstrap 95 % interval and a two-sided sign-flip permutation p-value (every "
            "metric: <code>report.json</code>, <code>comparisons</code>).</p>"
            + _table(["column", "A − B", "difference [95 %], p, sessions", "p"], rows))


def rule_break_html(result: Mapping[str, Any], rb: Mapping[str, Any]) -> str:
    errors = []
    for d in sorted(result["conditions"], key=lambda d: (d["player"], d["column"])):
        rate = d["rule_break_rate"]
        errors.append([(d["player"], d["player"]), (d["column"], d["column"]), (str(d["sessions"]), d["sessions"]),
                       (str(d["errored_sessions"]), d["errored_sessions"]),
                       (f"{rate:.3f}" if rate is not None else "-", rate if rate is not None else ""),
                       (f"{d['tokens_per_session']:,.0f}" if d["tokens_per_session"] is not None else "-",
                        d["tokens_per_session"] if d["tokens_per_session"] is not None else "")])
    kinds_rows = []
    for p, cols in sorted(rb["counts"].items()):
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
    for name in sorted(plots, key=lambda n: (n.split("_", 1)[1] if "_" in n else n, n)):
        path = out / name
        try:
            data = base64.b64encode(path.read_bytes()).decode("ascii")
        except OSError:
            continue
        parts.append(f'<figure><img alt="{esc(name)}" src="data:image/png;base64,{data}">'
                     f"<figcaption>{esc(name)}</figcaption></figure>")
    parts.append("</div>")
    return "".join(parts)


def render(result: Mapping[str, Any], out: Path, logs: Sequence[str], rb: Mapping[str, Any],
           strings: Sequence[str], limit: Optional[int]) -> list[str]:
    """The page, as pieces of text to write one after the other."""
    players = sorted({d["player"] for d in result["conditions"]})
    columns = sorted({d["column"] for d in result["conditions"]})
    groups = list(result["overall_groups"])
    body = [f"<h1>EconArena report</h1><p class=\"lead\">{len(logs)} log(s), {len(players)} player(s), "
            f"{len(columns)} column(s). Each figure is the mean over finished sessions with a 95 % bootstrap "
            f"interval over sessions ({BOOTSTRAP_RESAMPLES} resamples). Click a column heading to sort; "
            "the rows under each table are the column's floors and ceiling.</p>"]
    errored = [d for d in result["conditions"] if d["errored_sessions"]]
    if errored:
        body.append('<p class="warn"><strong>' + esc(sum(d["errored_sessions"] for d in errored))
                    + " errored session(s)</strong> are left out of the means: "
                    + esc("; ".join(f"{d['player']} in {d['column']}: {d['errored_sessions']}" for d in errored))
                    + "</p>")
    partial = sorted({d["column"] for d in result["conditions"] if not d["finished"]})
    if partial:
        body.append('<p class="warn"><strong>Partial logs</strong> (the run did not finish; its finished sessions '
                    "are used): " + esc(", ".join(partial)) + "</p>")
    body.append('<nav><a href="#leaderboard">Leaderboard</a> <a href="#components">Components</a> '
                '<a href="#rule-breaks">Rule breaks</a> <a href="#browser">Sessions</a> '
                '<a href="#plots">Plots</a> <a href="#inputs">Inputs</a></nav>')
    body.append('<section class="part"><h2 id="leaderboard">Leaderboard: EconArena Score (EAS)</h2>')
    body.append(metric_table(result, "eas", columns, players, groups))
    depth = result.get("depth") or {}
    if depth:
        body.append("<p>Depth of reasoning τ (cognitive hierarchy, first runs; people: τ ≈ 1.5): "
                    + esc("; ".join(f"{p} {col} τ = {d['tau']:.2f}" for p, cols in sorted(depth.items())
                                    for col, d in sorted(cols.items()))) + ".</p>")
    body.append('</section><section class="part" id="components">')
    for m in COMPONENTS:
        body.append(f'<h2 id="metric-{esc(m)}">{esc(m)}</h2>' + metric_table(result, m, columns, players, []))
    body.append(diagnostics_html(result.get("diagnostics") or {}))
    body.append(comparisons_html(result.get("comparisons") or []))
    body.append('</section><section class="part">' + rule_break_html(result, rb) + "</section>")
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
    inputs = [[(Path(n["file"]).name, n["file"]), (n["status"], n["status"]), (redact_text(n["why"] or ""), None)]
              for n in result["inputs"]]
    body.append('<section class="part"><h2 id="inputs">Inputs</h2>' + _table(["file", "status", "notes"], inputs)
                + "</section>")
    script = SCRIPT
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    head = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            "<title>EconArena report</title><style>" + STYLE + "</style></head><body>")
    data = ['<script type="application/json" id="data">{"logs":[']
    for i, log in enumerate(logs):
        data += [",", log] if i else [log]
    data.append('],"strings":' + json_for_script(list(strings)) + ',"rb":' + json_for_script(rb) + ',"kinds":'
                + json_for_script(list(RULE_BREAK_KINDS)) + "}</script>")
    return [head, *body, *data, "<script>" + script + "</script></body></html>\n"]


def write(result: Mapping[str, Any], out: Path, browser: tuple[list[str], dict[str, Any], list[str]],
          limit: Optional[int]) -> Path:
    """Write ``out/report.html`` from ``browser_data``'s answer (the plots must already be in ``out``)."""
    logs, rb, strings = browser
    path = out / "report.html"
    # a lone surrogate from a log (a "\ud800" escape) cannot be UTF-8: it becomes a JSON escape again
    with open(path, "w", encoding="utf-8", errors="backslashreplace", newline="\n") as f:
        for part in render(result, out, logs, rb, strings, limit):
            f.write(part)
    return path


def rule_break_counts(rb: Mapping[str, Any]) -> dict[str, dict[str, dict[str, int]]]:
    """{player: {column: {seats, kind: n}}} for report.json and report.md."""
    return {p: {col: dict(c) for col, c in cols.items()} for p, cols in rb["counts"].items()}


STYLE = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;max-width:1500px;
padding:12px 24px;color:#1d1d1f;background:#fff}
h1{font-size:24px;margin:8px 0}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:3px}
h3{font-size:15px;margin:18px 0 6px}
nav a{margin-right:14px}.lead{color:#333}.warn{background:#fff3cd;border:1px solid #e0c66c;padding:6px 10px}
.note{color:#666}
table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}
th,td{border:1px solid #d8d8d8;padding:3px 7px;text-align:left;vertical-align:top}
thead th{background:#f1f3f6;position:sticky;top:0}
table.sortable thead th{cursor:pointer;user-select:none}
table.sortable thead th[aria-sort=ascending]::after{content:" \\25B2"}
table.sortable thead th[aria-sort=descending]::after{content:" \\25BC"}
tfoot td{color:#666;font-style:italic;background:#fafafa}
table.metric td{white-space:nowrap;font-variant-numeric:tabular-nums}table.metric td:first-child{font-weight:600}
.picker{margin:8px 0;display:flex;gap:14px;flex-wrap:wrap}select{font-size:13px;max-width:420px}
#sb-info{margin:4px 0 8px;color:#333}
table.grid td{padding:0}table.grid th{font-size:12px}table.grid th .who{font-weight:400;color:#555;display:block}
table.grid td.run{padding:3px 7px;font-weight:600}table.grid td.out{padding:3px 7px;font-size:12px}
button.cell{display:block;width:100%;min-width:118px;text-align:left;border:0;background:#fff;padding:3px 6px;
font:12px/1.3 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;cursor:pointer}
button.cell:hover{background:#eef4ff}button.cell.sel{outline:2px solid #1f6feb;background:#e3edff}
button.cell.bad{background:#fdecea}button.cell.bad.sel{background:#f9d5d1}
button.cell.me{border-left:4px solid #1f6feb}button.cell.won{background:#eaf7ee}
button.cell.won.sel{background:#d4f0dc}.legend{font-size:12px;color:#555;margin:4px 0}
.legend span{display:inline-block;padding:0 6px;margin-right:10px}
button.cell .a{font-weight:700;font-size:13px}button.cell .k{color:#b42318;font-weight:600}
button.cell .ok{color:#1a7f37}button.cell .d{color:#555}
#sb-detail{margin-top:10px}
.detail{border:1px solid #ccd;border-radius:6px;padding:8px 12px;background:#fbfbfd}
.detail dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:4px 0}
.detail dt{color:#555}.detail dd{margin:0}
.fields{display:grid;grid-template-columns:110px auto;gap:4px 10px;margin:8px 0}
.fields .name{font-weight:700;color:#333}.fields .val{white-space:pre-wrap;word-break:break-word;
background:#fff;border:1px solid #e3e3e3;padding:3px 6px}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;border:1px solid #e1e4e8;padding:8px;
max-height:420px;overflow:auto;font-size:12px}
.kind{color:#b42318;font-weight:700}.example{margin:6px 0 12px}
.plots{display:flex;flex-wrap:wrap;gap:10px}.plots figure{margin:0}.plots img{max-width:720px;width:100%;
border:1px solid #eee}figcaption{font-size:12px;color:#555}
code{background:#f2f2f2;padding:0 3px}
"""

SCRIPT = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("data").textContent);
  var S = D.strings;
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  // control characters and bidirectional overrides shown as visible marks, never interpreted
  function visible(s) {
    if (s === null || s === undefined) return "";
    return String(s).replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, function (c) {
      var n = c.charCodeAt(0);
      return String.fromCharCode(n === 127 ? 0x2421 : 0x2400 + n);
    }).replace(/[\u202A-\u202E\u2066-\u2069]/g, function (c) {
      return "<U+" + c.charCodeAt(0).toString(16).toUpperCase() + ">";
    });
  }
  function num(x) {
    if (x === null || x === undefined) return "-";
    if (typeof x !== "number") return String(x);
    return String(Number(x.toFixed(3)));
  }

  // ---- sortable tables ----
  function sortBy(table, col, th) {
    var body = table.tBodies[0];
    var asc = th.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows);
    function key(r) {
      var c = r.cells[col];
      var v = c ? c.getAttribute("data-v") : null;
      if (v === null || v === "") return null;
      var f = Number(v);
      return isNaN(f) ? v.toLowerCase() : f;
    }
    rows.sort(function (a, b) {
      var x = key(a), y = key(b);
      if (x === null && y === null) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      if (x < y) return asc ? -1 : 1;
      if (x > y) return asc ? 1 : -1;
      return 0;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (t) {
    Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th, i) {
      th.addEventListener("click", function () { sortBy(t, i, th); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") sortBy(t, i, th); });
    });
  });

  // ---- session browser ----
  var colSel = document.getElementById("sb-col"), playerSel = document.getElementById("sb-player"),
      sessSel = document.getElementById("sb-session"), info = document.getElementById("sb-info"),
      grid = document.getElementById("sb-grid"), detail = document.getElementById("sb-detail");
  var columns = [];
  D.logs.forEach(function (L, i) {
    if (columns.indexOf(L.col) < 0) columns.push(L.col);
  });
  columns.sort();
  function rowsOf(col) {  // [{player, log}] of a column
    var out = [];
    D.logs.forEach(function (L, i) {
      if (L.col === col) L.rows.forEach(function (p) { out.push({player: p, log: i}); });
    });
    out.sort(function (a, b) { return a.player < b.player ? -1 : a.player > b.player ? 1 : 0; });
    return out;
  }
  function fill(sel, items) {
    while (sel.firstChild) sel.removeChild(sel.firstChild);
    items.forEach(function (it) {
      var o = el("option", null, it.label);
      o.value = it.value;
      sel.appendChild(o);
    });
  }
  var state = {log: null, player: null, session: null, run: null, seat: null};
  function currentLog() { return D.logs[state.log]; }
  function sessionOf(L, s) {
    for (var i = 0; i < L.sessions.length; i++) if (L.sessions[i].s === s) return L.sessions[i];
    return null;
  }
  function setHash() {
    var L = currentLog();
    if (!L) return;
    var h = "col=" + encodeURIComponent(L.col) + "&player=" + encodeURIComponent(state.player) +
      "&session=" + state.session;
    if (state.run !== null) h += "&run=" + (state.run + 1) + "&seat=" + state.seat;
    if (window.history && history.replaceState) history.replaceState(null, "", "#" + h);
  }
  function chooseColumn(col, player, session) {
    var rows = rowsOf(col);
    fill(playerSel, rows.map(function (r, i) { return {label: r.player, value: String(i)}; }));
    var pick = 0;
    rows.forEach(function (r, i) { if (r.player === player) pick = i; });
    playerSel.value = String(pick);
    colSel.value = col;
    choosePlayer(rows[pick], session);
  }
  function choosePlayer(row, session) {
    state.log = row.log;
    state.player = row.player;
    var L = currentLog();
    fill(sessSel, L.sessions.map(function (s) {
      var tag = s.errored ? "errored" : ("EAS " + num(s.eas[row.player]));
      return {label: "session " + s.s + " (" + tag + (s.t ? ", with replies" : "") + ")", value: String(s.s)};
    }));
    var target = null;
    L.sessions.forEach(function (s) { if (s.s === session) target = s.s; });
    if (target === null) {
      L.sessions.forEach(function (s) { if (target === null && s.t) target = s.s; });
    }
    if (target === null && L.sessions.length) target = L.sessions[0].s;
    sessSel.value = String(target);
    chooseSession(target);
  }
  function chooseSession(s) {
    state.session = s;
    state.run = null;
    state.seat = null;
    drawGrid();
    drawDetail();
    setHash();
  }
  function seatLabel(L, p) { return L.players[p]; }
  function drawGrid() {
    var L = currentLog(), S0 = sessionOf(L, state.session);
    while (grid.firstChild) grid.removeChild(grid.firstChild);
    while (info.firstChild) info.removeChild(info.firstChild);
    if (!S0) return;
    var params = Object.keys(S0.p).map(function (k) { return k + " " + num(S0.p[k]); }).join(", ");
    info.appendChild(el("div", null, L.col + " · " + L.file + (L.finished ? "" : " (partial)") + " · session " +
      S0.s + (params ? " · " + params : "") + " · evaluated: " + L.rows.join(", ")));
    if (L.command) info.appendChild(el("div", "note", "command: " + L.command));
    if (S0.errored) info.appendChild(el("div", "warn", "errored session: " + (S0.err || "no error text") +
      " (runs after the error are missing; their seats gave no answer)"));
    if (!S0.t) info.appendChild(el("div", "note", "Replies of this session are not embedded: write the report " +
      "with --transcripts all to see them. Its moves are below."));
    var seats = [], who = {};
    S0.runs.forEach(function (r) {
      r[3].forEach(function (c) {
        if (seats.indexOf(c[0]) < 0) seats.push(c[0]);
        who[c[0]] = who[c[0]] || {};
        who[c[0]][seatLabel(L, c[1])] = 1;
      });
    });
    seats.sort(function (a, b) { return a - b; });
    var t = el("table", "grid"), head = el("tr");
    head.appendChild(el("th", null, "run"));
    head.appendChild(el("th", null, L.outcome));
    head.appendChild(el("th", null, "winners"));
    seats.forEach(function (s) {
      var th = el("th", null, "seat " + s);
      th.appendChild(el("span", "who", Object.keys(who[s]).join(" / ")));
      head.appendChild(th);
    });
    var thead = el("thead");
    thead.appendChild(head);
    t.appendChild(thead);
    var tb = el("tbody");
    S0.runs.forEach(function (r) {
      var tr = el("tr");
      tr.appendChild(el("td", "run", String(r[0] + 1)));
      tr.appendChild(el("td", "out", num(r[1])));
      tr.appendChild(el("td", "out", r[2].length ? r[2].join(", ") : "none"));
      var bySeat = {};
      r[3].forEach(function (c) { bySeat[c[0]] = c; });
      seats.forEach(function (s) {
        var td = el("td"), c = bySeat[s];
        if (c) {
          var won = r[2].indexOf(s) >= 0;
          var b = el("button", "cell" + (c[3] ? "" : " bad") + (won ? " won" : "") +
            (seatLabel(L, c[1]) === state.player ? " me" : ""));
          b.type = "button";
          b.setAttribute("data-run", String(r[0] + 1));
          b.setAttribute("data-seat", String(s));
          b.setAttribute("data-player", seatLabel(L, c[1]));
          b.appendChild(el("span", "a", num(c[2])));
          b.appendChild(document.createTextNode(" "));
          b.appendChild(c[3] ? el("span", "ok", won ? "valid, won" : "valid") : el("span", "k", c[7] || "rule break"));
          b.appendChild(el("br"));
          b.appendChild(el("span", "d", "payoff " + num(c[4]) + " · NE " + num(c[5]) +
            (c[6] !== null ? " · v " + num(c[6]) : "")));
          if (L.players.length > 1 && Object.keys(who[s]).length > 1) {
            b.appendChild(el("br"));
            b.appendChild(el("span", "d", seatLabel(L, c[1])));
          }
          b.addEventListener("click", function () { chooseCell(r[0], s); });
          td.appendChild(b);
        }
        tr.appendChild(td);
      });
      tb.appendChild(tr);
    });
    t.appendChild(tb);
    var legend = el("div", "legend");
    legend.appendChild(el("span", null, "cell: " + L.action + ", valid or the kind of rule break; payoff; NE = the " +
      "equilibrium action" + (L.outcome === "price" ? "; v = the seat's private value" : "")));
    var me = el("span", null, state.player + "'s seats");
    me.style.borderLeft = "4px solid #1f6feb";
    legend.appendChild(me);
    var won = el("span", null, "won the run");
    won.style.background = "#eaf7ee";
    legend.appendChild(won);
    var bad = el("span", null, "rule break");
    bad.style.background = "#fdecea";
    legend.appendChild(bad);
    grid.appendChild(legend);
    grid.appendChild(t);
    var done = S0.runs.length;
    if (S0.errored) grid.appendChild(el("p", "note", done + " run(s) finished before the error."));
  }
  function chooseCell(run, seat) {
    state.run = run;
    state.seat = seat;
    Array.prototype.forEach.call(grid.querySelectorAll("button.cell"), function (b) {
      var on = Number(b.getAttribute("data-run")) === run + 1 && Number(b.getAttribute("data-seat")) === seat;
      b.className = b.className.replace(/ sel/g, "") + (on ? " sel" : "");
    });
    drawDetail();
    setHash();
  }
  function promptText(msgs) {
    return msgs.map(function (m) {
      return (m[0] ? m[0] + ":\n" : "") + m[1].map(function (i) { return S[i]; }).join("\n");
    }).join("\n\n");
  }
  function drawDetail() {
    while (detail.firstChild) detail.removeChild(detail.firstChild);
    var L = currentLog(), S0 = sessionOf(L, state.session);
    if (!S0 || state.run === null) {
      detail.appendChild(el("p", "note", "Click a cell for that seat's prompt and reply."));
      return;
    }
    var cell = null;
    S0.runs.forEach(function (r) {
      if (r[0] === state.run) r[3].forEach(function (c) { if (c[0] === state.seat) cell = c; });
    });
    var box = el("div", "detail");
    box.id = "sb-cell";
    var player = cell ? seatLabel(L, cell[1]) : "?";
    box.appendChild(el("h3", null, "Session " + S0.s + " · run " + (state.run + 1) + " · seat " + state.seat +
      " · " + player));
    var dl = el("dl");
    function row(k, v, cls) { dl.appendChild(el("dt", null, k)); dl.appendChild(el("dd", cls || null, v)); }
    var call = L.calls[S0.s + ":" + state.run + ":" + state.seat];
    if (cell) {
      row(L.action, num(cell[2]));
      row("valid", cell[3] ? "yes" : "no: rule break", cell[3] ? null : "kind");
      if (!cell[3]) row("rule break", cell[7] || "rule break", "kind");
      row("payoff", num(cell[4]));
      row("NE action", num(cell[5]));
      if (cell[6] !== null) row("private value", num(cell[6]));
    }
    if (call && call[2]) row("finish_reason", call[2]);
    box.appendChild(dl);
    if (!S0.t) {
      box.appendChild(el("p", "note", "This session's replies are not embedded (econarena-report --transcripts)."));
    } else if (!call) {
      box.appendChild(el("p", "note", "No reply on record for this seat: the call failed, or its completion " +
        "function records no sampling event."));
    } else {
      var f = call[3], fields = el("div", "fields");
      ["understanding", "choice", "reason"].forEach(function (k) {
        fields.appendChild(el("div", "name", k));
        var v = el("div", "val", f[k] !== undefined ? visible(S[f[k]]) : "(none: no JSON object with a choice)");
        v.setAttribute("data-field", k);
        fields.appendChild(v);
      });
      box.appendChild(fields);
      box.appendChild(el("h4", null, "Reply"));
      var rep = el("pre", "reply", call[1] === null ? "(no reply)" : visible(call[1]));
      rep.id = "sb-reply";
      box.appendChild(rep);
      if (call[4]) box.appendChild(el("p", "note", call[4] + " more characters in the log."));
      box.appendChild(el("h4", null, "Prompt"));
      var pr = el("pre", "prompt", visible(promptText(call[0])));
      pr.id = "sb-prompt";
      box.appendChild(pr);
    }
    detail.appendChild(box);
  }
  fill(colSel, columns.map(function (c) { return {label: c, value: c}; }));
  colSel.addEventListener("change", function () { chooseColumn(colSel.value, state.player, null); });
  playerSel.addEventListener("change", function () {
    choosePlayer(rowsOf(colSel.value)[Number(playerSel.value)], state.session);
  });
  sessSel.addEventListener("change", function () { chooseSession(Number(sessSel.value)); });

  // ---- rule-break examples ----
  var ex = document.getElementById("rb-examples");
  while (ex.firstChild) ex.removeChild(ex.firstChild);
  var anyExample = false;
  Object.keys(D.rb.examples).sort().forEach(function (p) {
    var byKind = D.rb.examples[p];
    D.kinds.forEach(function (k) {
      var items = byKind[k];
      if (!items || !items.length) return;
      anyExample = true;
      var box = el("div", "example");
      var h = el("div");
      h.appendChild(el("strong", null, p));
      h.appendChild(document.createTextNode(" · "));
      h.appendChild(el("span", "kind", k));
      box.appendChild(h);
      items.forEach(function (it) {
        var L = D.logs[it.log];
        var where = it.col + ", session " + it.session + ", run " + (it.run + 1) + ", seat " + it.seat +
          " (valid range " + num(it.range[0]) + " to " + num(it.range[1]) + ")" +
          (it.finish_reason ? ", finish_reason " + it.finish_reason : "");
        var line = el("div", "note", where + " ");
        var sess = sessionOf(L, it.session);
        if (sess && sess.t) {
          var go = el("button", null, "show in the session browser");
          go.type = "button";
          go.addEventListener("click", function () {
            chooseColumn(L.col, p, it.session);
            chooseCell(it.run, it.seat);
            document.getElementById("browser").scrollIntoView();
          });
          line.appendChild(go);
        }
        box.appendChild(line);
        box.appendChild(el("pre", "reply", it.reply ? visible(it.reply) : "(no reply on record)"));
        if (it.cut) box.appendChild(el("p", "note", it.cut + " more characters in the log."));
      });
      ex.appendChild(box);
    });
  });
  if (!anyExample) ex.appendChild(el("p", "note", "No rule breaks."));

  // ---- start: from the address (#col=...&player=...&session=...&run=...&seat=...) or the first log ----
  var want = {};
  (location.hash || "").replace(/^#/, "").split("&").forEach(function (kv) {
    var i = kv.indexOf("=");
    if (i > 0) {
      try { want[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1)); } catch (e) { /* ignore */ }
    }
  });
  if (want.view === "sessions") {  // the session browser alone: a page to link to, or to picture
    Array.prototype.forEach.call(document.querySelectorAll("section.part"), function (s) {
      if (s.id !== "sessions") s.style.display = "none";
    });
  }
  if (columns.length) {
    var col = columns.indexOf(want.col) >= 0 ? want.col : columns[0];
    chooseColumn(col, want.player || null, want.session !== undefined ? Number(want.session) : null);
    if (want.run !== undefined && want.seat !== undefined) {
      chooseCell(Number(want.run) - 1, Number(want.seat));
      if (want.view !== "sessions") document.getElementById("browser").scrollIntoView();
    }
  } else {
    grid.appendChild(el("p", "note", "No sessions."));
  }
  document.body.setAttribute("data-ready", "1");
})();
"""
