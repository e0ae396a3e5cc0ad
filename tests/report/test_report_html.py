"""report.html: written by econarena-report from real oaieval logs, opened in headless Chromium.

The browser tests read the DOM after the page's script ran (``--dump-dom``). They need Debian's
``chromium`` (``bash scripts/browser.sh`` installs it; CI runs that first) and fail, never skip,
without it: a report page nobody opened is not tested.
"""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from browser import browse, fragment, page_data

from econarena_evals.core.answers import parse_choice
from econarena_evals.core.prompts import seat_and_run
from econarena_evals.games import read_prompt
from econarena_evals.log.evallog import read_log
from econarena_evals.log.transcripts import read_calls

from conftest import ERRORED, REGISTRY, base_env, cli, dead_endpoint, run_cli

CLI_SECRET = "sk-live-CLIsecret0123456789"
ENV_SECRET = "sk-env-ENVsecret0123456789"
SCRIPTED = "econarena/chat:my-local-model"
EVIL_PLAYER = "evil<script>document.title='pwned-name'</script>"
MALICIOUS = ("<script>document.title='pwned'</script></textarea><img src=x onerror=\"document.title='pwned-img'\">"
             "&amp; &lt;b&gt; \u0000\u0007\u001b[31m \u202e \ud800 {\"understanding\": \"</script><b>x</b>\", "
             "\"choice\": \"<b>7</b>\", \"reason\": \"&#x3C;script&#x3E;\"}")
CONTROL_REPLY = json.dumps({"understanding": "nul\u0000bell\u0007 &amp; <i>not italic</i>", "choice": 0,
                            "reason": "</textarea><script>document.title='pwned-valid'</script>"})


def scripted_label(data: dict) -> str:
    """The scripted model's label in the rule breaks, as every other table names it: its endpoint too."""
    [label] = [k for k in data["rule_breaks"] if k.split(" @ ")[0] == SCRIPTED]
    assert label.startswith(f"{SCRIPTED} @ 127.0.0.1:"), label
    return label


def scripted_rule_breaks(data: dict) -> dict:
    return data["rule_breaks"][scripted_label(data)]


@pytest.fixture(scope="module")
def logs(tmp_path_factory, server) -> Path:
    d = tmp_path_factory.mktemp("html_logs")
    env = base_env()
    run_cli([cli("oaieval"), "econarena/random", "econarena.beauty_hist", "--registry_path", str(REGISTRY),
             "--record_path", str(d / "random_beauty_hist.jsonl"), "--max_samples", "4"], env)
    run_cli([cli("oaieval"), "econarena/level1,econarena/human", "econarena.auction_L", "--registry_path",
             str(REGISTRY), "--record_path", str(d / "arena.jsonl"), "--max_samples", "3"], env)
    # another fn against the same opponent: a second row of that column, compared with the first
    run_cli([cli("oaieval"), "econarena/level2,econarena/human", "econarena.auction_L", "--registry_path",
             str(REGISTRY), "--record_path", str(d / "arena2.jsonl"), "--max_samples", "3"], env)
    # a model behind a local OpenAI-compatible server, its key both in the environment and on the command line;
    # its scripted replies break the rules in several ways (prose, a number out of range)
    model_env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": ENV_SECRET}
    run_cli([cli("oaieval"), SCRIPTED, "econarena.beauty_L", "--registry_path", str(REGISTRY),
             "--completion_args", f"api_key={CLI_SECRET}", "--record_path", str(d / "scripted.jsonl"),
             "--max_samples", "4"], model_env)
    # every session errors: evals' gpt-4 fn against a dead endpoint
    run_cli([cli("oaieval"), "gpt-4", "econarena.beauty_L", "--registry_path", str(REGISTRY),
             "--record_path", str(d / "errored.jsonl"), "--max_samples", "1"], dead_endpoint(env), returncode=ERRORED)
    return d


@pytest.fixture(scope="module")
def report(logs, tmp_path_factory):
    out = tmp_path_factory.mktemp("html_report")
    proc = run_cli([cli("econarena-report"), str(logs), "--out", str(out)], base_env())
    return out, json.loads((out / "report.json").read_text()), proc


@pytest.fixture(scope="module")
def evil(tmp_path_factory):
    """A log edited by hand from a real one: a player named like markup, a reply that is markup, control
    characters and entities, and an API key in the recorded command."""
    d = tmp_path_factory.mktemp("evil")
    real = d / "real.jsonl"
    run_cli([cli("oaieval"), "econarena/nash", "econarena.beauty_L", "--registry_path", str(REGISTRY),
             "--record_path", str(real), "--max_samples", "1"], base_env())
    lines = []
    for line in real.read_text().splitlines():
        row = json.loads(line)
        if "spec" in row:
            row["spec"]["completion_fns"] = [EVIL_PLAYER]
            row["spec"]["run_config"]["command"] = (f"oaieval '{EVIL_PLAYER}' econarena.beauty_L --completion_args "
                                                    f"api_key={CLI_SECRET},model=x")
        elif row.get("type") == "econarena_players":  # the roster names the player as the rest of the log does
            for entry in row["data"]["players"]:
                entry["name"] = EVIL_PLAYER
        elif row.get("type") == "sampling":
            if isinstance(row["data"].get("econarena"), dict):  # the seat call's tag names the player too
                row["data"]["econarena"]["player"] = EVIL_PLAYER
            seat, run, _ = seat_and_run(row["data"]["prompt"][1]["content"])
            if (run, seat) == (1, 2):
                row["data"]["sampled"] = [MALICIOUS]
            elif (run, seat) == (1, 3):
                row["data"]["sampled"] = [CONTROL_REPLY]
        elif row.get("type") == "econarena_run":
            for seat in row["data"]["seats"]:
                seat["player"] = EVIL_PLAYER
                if row["data"]["run"] == 0 and seat["seat"] == 2:
                    seat["action"], seat["valid"], seat["payoff"] = None, False, 0.0
        elif row.get("type") == "econarena_session":
            row["data"]["player"] = EVIL_PLAYER
            row["data"]["error"] = f"Error code: 401 - Incorrect API key provided: {CLI_SECRET}"
        lines.append(json.dumps(row))
    real.unlink()
    (d / "logs").mkdir()
    (d / "logs" / "evil.jsonl").write_text("\n".join(lines) + "\n")
    out = d / "report"
    run_cli([cli("econarena-report"), str(d / "logs"), "--out", str(out)], base_env())
    return out, d / "logs" / "evil.jsonl"


# ---- the file ----

@pytest.mark.e2e
def test_the_page_is_one_file_that_fetches_nothing(report):
    out, _, proc = report
    page = out / "report.html"
    assert (out / "report.md").exists() and page.exists()
    assert str(page) in proc.stdout
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)"', text).group(1)
    assert "default-src 'none'" in csp and "img-src data:" in csp and "script-src 'sha256-" in csp
    for pattern in (r'\bsrc="(?!data:)', r"<link\b", r"@import", r"url\(", r'href="(?!#)'):
        assert not re.search(pattern, text), pattern
    assert len(re.findall(r"<img ", text)) == len(json.loads((out / "report.json").read_text())["plots"])


@pytest.mark.e2e
def test_the_page_holds_what_report_md_holds(report):
    out, data, _ = report
    text = (out / "report.html").read_text(encoding="utf-8")
    for heading in ("Leaderboard: EconArena Score (EAS)", ">rationality<", ">ne_proximity<", ">win_rate<",
                    ">rule_following<", ">convergence<", "zero point: every answer a rule break (no credit up to here)", "ceiling: Nash play",
                    "Depth of reasoning", "Paired comparisons", "Rule breaks by kind", "Inputs", "Sessions"):
        assert heading in text, heading
    for cond in data["conditions"]:
        m = cond["metrics"]["eas"]
        if m["mean"] is not None:
            assert f"{m['mean']:.3f} [{m['ci95'][0]:.3f}, {m['ci95'][1]:.3f}]" in text


@pytest.mark.e2e
def test_rule_breaks_are_counted_by_kind_over_every_session(logs, report):
    out, data, _ = report
    counts = scripted_rule_breaks(data)["beauty_L"]
    log = read_log(logs / "scripted.jsonl")
    invalid = [(r["session"], r["run"], s["seat"]) for r in log.runs for s in r["seats"] if not s["valid"]]
    # the scripted model: seat 3 answers in prose on odd runs, seat 4 goes out of range in run 2
    assert counts["no JSON object"] == sum(1 for _, run, seat in invalid if seat == 3) == 4 * 5
    assert counts["out of range"] == sum(1 for _, run, seat in invalid if seat == 4) == 4
    assert sum(counts[k] for k in ("not a number", "cut off at token limit", "no answer or error")) == 0
    assert counts["seats"] == 4 * 50
    md = (out / "report.md").read_text()
    assert f"| {scripted_label(data)} | beauty_L | 200 | 20 | 0 | 4 | 0 | 0 |" in md


# ---- in the browser ----

@pytest.mark.e2e
def test_leaderboard_renders_the_numbers_of_the_logs(logs, report):
    out, data, _ = report
    dom = browse(out / "report.html")
    assert 'data-ready="1"' in dom  # the script ran to its end
    board = dom[dom.index('id="leaderboard"'):dom.index('id="components"')]
    final = read_log(logs / "random_beauty_hist.jsonl").final_report
    row = re.search(r"<tr><td[^>]*>econarena/random</td>(.*?)</tr>", board).group(1)
    cond = next(c for c in data["conditions"] if c["player"] == "econarena/random")
    lo, hi = cond["metrics"]["eas"]["ci95"]
    assert f"{final['eas']:.3f} [{lo:.3f}, {hi:.3f}]" in row
    assert board.count('<th scope="col" tabindex="0">') >= 3  # headings to click for sorting


@pytest.mark.e2e
def test_a_session_grid_shows_the_log_and_a_cell_shows_the_reply(logs, report):
    """Preselected by the address: the scripted model, its first session, run 2, seat 4 (out of range)."""
    out, _, _ = report
    log = read_log(logs / "scripted.jsonl")
    session = min(s["session"] for s in log.sessions)
    dom = browse(out / "report.html", fragment(col="beauty_L", player=SCRIPTED, session=session, run=2, seat=4))
    grid = dom[dom.index('id="sb-grid"'):dom.index('id="sb-detail"')]
    runs = sorted((r for r in log.runs if r["session"] == session), key=lambda r: r["run"])
    cells = re.findall(r'<button class="cell[^"]*" type="button" data-run="(\d+)" data-seat="(\d+)"', grid)
    assert len(cells) == 10 * 5
    for r in runs:
        target = r["target"]
        assert f'<td class="out">{fmt(target)}</td>' in grid
        for seat in r["seats"]:
            where = f'data-run="{r["run"] + 1}" data-seat="{seat["seat"]}"'
            cell = re.search(where + r"[^>]*>(.*?)</button>", grid).group(1)
            assert f'<span class="a">{fmt(seat["action"])}</span>' in cell
            assert f"payoff {fmt(seat['payoff'])}" in cell and f"NE {fmt(seat['ne_action'])}" in cell
            assert ('class="ok">valid' in cell) == seat["valid"]
            assert ("won" in cell) == (seat["seat"] in r["winners"])
    detail = dom[dom.index('id="sb-detail"'):]
    assert '<dd class="kind">out of range</dd>' in detail
    # the reply shown is the one this seat sent in this session: its prompt names the seat, the run and c̄
    c_bar = runs[1]["c_bar"]
    expected = None
    for line in (logs / "scripted.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row.get("type") != "sampling":
            continue
        facts = read_prompt(row["data"]["prompt"])
        if (facts.seat, facts.run, facts.upper) == (4, 2, c_bar):
            expected = row["data"]["sampled"][0]
    assert expected is not None and parse_choice(expected) == runs[1]["seats"][3]["action"]
    reply = re.search(r'<pre class="reply" id="sb-reply">(.*?)</pre>', detail, re.S).group(1)
    assert html.unescape(reply) == expected
    prompt = html.unescape(re.search(r'<pre class="prompt" id="sb-prompt">(.*?)</pre>', detail, re.S).group(1))
    assert "You are Player 4" in prompt and "This is run 2 of 10" in prompt and f"between 0 and {fmt(c_bar)}" in prompt
    assert 'data-field="choice">' + html.escape(str(json.loads(expected)["choice"]), quote=False) in detail


def fmt(x) -> str:
    """A number as the page shows it (JavaScript's Number(x.toFixed(3)))."""
    if x is None:
        return "-"
    text = f"{x:.3f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


@pytest.mark.e2e
def test_arena_cells_say_which_seat_is_which_player(logs, report):
    out, _, _ = report
    log = read_log(logs / "arena.jsonl")
    session = min(s["session"] for s in log.sessions)
    column = "auction_L (vs econarena/human)"
    dom = browse(out / "report.html", fragment(col=column, player="econarena/level1", session=session))
    grid = dom[dom.index('id="sb-grid"'):dom.index('id="sb-detail"')]
    first = next(r for r in log.runs if r["session"] == session and r["run"] == 0)
    heads = re.findall(r'<th>seat (\d)<span class="who">([^<]*)</span></th>', grid)
    assert [(int(s), html.unescape(p)) for s, p in heads] == [(s["seat"], s["player"]) for s in first["seats"]]
    mine = re.findall(r'class="cell[^"]* me" type="button" data-run="\d+" data-seat="(\d)"', grid)
    level1 = [s["seat"] for s in first["seats"] if s["player"] == "econarena/level1"]
    assert len(mine) == 10 and set(mine) == {str(level1[0])}


@pytest.mark.e2e
def test_the_errored_session_says_so(report):
    out, _, _ = report
    dom = browse(out / "report.html", fragment(col="beauty_L", player="gpt-4"))
    info = dom[dom.index('id="sb-info"'):dom.index('id="sb-grid"')]
    assert "errored session:" in info


@pytest.mark.e2e
def test_rule_break_examples_show_the_replies(report):
    out, _, _ = report
    dom = browse(out / "report.html")
    examples = dom[dom.index('id="rb-examples"'):dom.index('id="sessions"')]
    assert "no JSON object" in examples and "out of range" in examples
    assert "I would pick" in examples  # the scripted model's prose answer, as text


@pytest.mark.e2e
def test_a_malicious_reply_is_shown_as_text_and_runs_nothing(evil):
    out, log = evil
    page = out / "report.html"
    session = read_log(log).sessions[0]["session"]
    dom = browse(page, fragment(col="beauty_L", player=EVIL_PLAYER, session=session, run=1, seat=2))
    assert "<title>EconArena report</title>" in dom and "pwned" not in dom.split("</title>")[0]
    assert 'data-ready="1"' in dom
    # no element came from a reply or a name: the page's two scripts and its plots only
    assert len(re.findall(r"<script\b", dom)) == 2
    assert not re.search(r"<img[^>]*onerror", dom) and "<textarea" not in dom and "<b>x</b>" not in dom
    reply = re.search(r'<pre class="reply" id="sb-reply">(.*?)</pre>', dom, re.S).group(1)
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;&lt;/textarea&gt;&lt;img src=x" in reply
    assert "&amp;amp; &amp;lt;b&amp;gt;" in reply  # entities stay as they were written
    assert "\u2400\u2407\u241b[31m" in reply and "\u0000" not in reply  # control characters made visible
    assert "&lt;U+202E&gt;" in reply  # a direction override is named, not obeyed
    # a lone surrogate (no character) is stored as its 6-character escape (docs/contract.md §8), shown as that text
    assert "\\ud800" in reply and "\ufffd" not in reply
    assert '<dd class="kind">not a number</dd>' in dom
    assert 'data-field="understanding">&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;</div>' in dom
    # a valid reply with the same tricks, one seat over
    dom = browse(page, fragment(col="beauty_L", player=EVIL_PLAYER, session=session, run=1, seat=3))
    assert "pwned" not in dom.split("</title>")[0] and len(re.findall(r"<script\b", dom)) == 2
    assert "nul\u2400bell\u2407 &amp;amp; &lt;i&gt;not italic&lt;/i&gt;" in dom
    # the player's name is text in every table and in the browser
    assert "evil&lt;script&gt;document.title='pwned-name'&lt;/script&gt;" in dom


@pytest.mark.e2e
def test_the_page_carries_no_secret(report, evil):
    for out in (report[0], evil[0]):
        for name in ("report.html", "report.md", "report.json"):
            text = (out / name).read_text(encoding="utf-8")
            assert CLI_SECRET not in text and ENV_SECRET not in text, (out, name)
            assert "sk-live" not in text and "sk-env" not in text
    text = (evil[0] / "report.html").read_text(encoding="utf-8")
    data = page_data(evil[0] / "report.html")
    assert "api_key=***" in data["logs"][0]["command"]
    assert "Incorrect API key provided: ***" in data["logs"][0]["sessions"][0]["err"]
    assert "\\u003cscript" in text and "<script>document" not in text


@pytest.mark.e2e
def test_transcripts_are_bounded_and_the_grid_covers_every_session(logs, tmp_path):
    for flag, expected in (("0", 0), ("1", 1), ("all", 4)):
        out = tmp_path / flag
        run_cli([cli("econarena-report"), str(logs / "scripted.jsonl"), "--out", str(out), "--transcripts", flag],
                base_env())
        log = page_data(out / "report.html")["logs"][0]
        assert len(log["sessions"]) == 4 and all(len(s["runs"]) == 10 for s in log["sessions"])
        assert sum(s["t"] for s in log["sessions"]) == expected
        assert len(log["calls"]) == 50 * expected
        counts = scripted_rule_breaks(json.loads((out / "report.json").read_text()))["beauty_L"]
        assert counts["no JSON object"] == 20 and counts["out of range"] == 4  # aggregates: every session


@pytest.mark.e2e
def test_open_prints_the_path_where_there_is_no_browser(logs, tmp_path):
    env = {k: v for k, v in base_env().items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = run_cli([cli("econarena-report"), str(logs / "arena.jsonl"), "--out", str(tmp_path / "r"), "--open"], env)
    assert f"open this file: {(tmp_path / 'r' / 'report.html').resolve()}" in proc.stdout


@pytest.mark.e2e
def test_a_screenshot_of_the_session_browser(report, tmp_path):
    out, _, _ = report
    shot = tmp_path / "shot.png"
    browse(out / "report.html", fragment(view="sessions", col="beauty_L", player=SCRIPTED, run=2, seat=4),
           f"--screenshot={shot}", "--window-size=1200,900", "--hide-scrollbars")
    from matplotlib.image import imread

    img = imread(shot)
    assert img.shape[:2] == (900, 1200)
    assert len({tuple(px) for px in img[::7, ::7, :3].reshape(-1, 3).round(2).tolist()}) > 20  # not blank


# ---- filing calls under their seats ----

@pytest.mark.e2e
def test_calls_are_filed_by_their_prompt_whatever_sample_id_evals_gave_them(logs, tmp_path):
    """evals may file a call under another session's sample id: the prompt and the action decide."""
    source = logs / "random_beauty_hist.jsonl"
    shuffled = tmp_path / "shuffled.jsonl"
    rows = [json.loads(line) for line in source.read_text().splitlines()]
    ids = sorted({r["sample_id"] for r in rows if r.get("type") == "sampling"})
    for i, r in enumerate(rows):
        if r.get("type") == "sampling":
            r["sample_id"] = ids[i % len(ids)]
    shuffled.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    log = read_log(shuffled)
    sessions = sorted(s["session"] for s in log.sessions)
    calls = read_calls(log, log.players, sessions).calls
    assert len(calls) == len(sessions) * 50
    runs = {(r["session"], r["run"]): r for r in log.runs}
    for (session, run, seat), call in calls.items():
        facts = read_prompt(call.prompt)
        assert (facts.seat, facts.run, facts.upper) == (seat, run + 1, runs[(session, run)]["c_bar"])
        assert parse_choice(call.reply) == runs[(session, run)]["seats"][seat - 1]["action"]
    assert calls == read_calls(read_log(source), log.players, sessions).calls


def test_a_tag_on_the_sampling_event_files_it_directly(tmp_path):
    """Where the eval tags a sampling event with its seat, the tag is used (no prompt needed)."""
    spec = {"spec": {"eval_name": "econarena.beauty_L.dev.v0", "completion_fns": ["p"], "run_id": "x",
                     "created_at": "2026-01-01"}}
    seats = [{"seat": s, "player": "p", "action": None if s == 1 else 1.0, "valid": s != 1, "payoff": 0.0,
              "ne_action": 0.0, "ne_payoff": 20.0} for s in (1, 2)]
    run = {"type": "econarena_run", "sample_id": "econarena.beauty_L.3",
           "data": {"cell": "beauty_L", "session": 3, "run": 0, "runs": 1, "game": "beauty", "c_bar": 50,
                    "prize": 100, "history_runs": 0, "winners": [2], "target": 0.667, "seats": seats}}
    sampling = {"type": "sampling", "sample_id": "econarena.beauty_L.9",
                "data": {"prompt": "no seat line here", "sampled": ["{\"choice\": 80}"], "finish_reason": "stop",
                         "econarena": {"cell": "beauty_L", "session": 3, "run": 0, "seat": 1, "player": "p"}}}
    cut = {"type": "sampling", "sample_id": "econarena.beauty_L.3",
           "data": {"prompt": "no seat line here", "sampled": ["{\"choice\": 1"], "finish_reason": "length",
                    "econarena": {"cell": "beauty_L", "session": 3, "run": 0, "seat": 2, "player": "p"}}}
    session = {"type": "econarena_session", "data": {"cell": "beauty_L", "session": 3, "player": "p", "eas": 0.5,
                                                     "errored": False, "error": None}}
    path = tmp_path / "tagged.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (spec, sampling, cut, run, session)) + "\n")
    got = read_calls(read_log(path), ["p"], [3])
    assert got.calls[(3, 0, 1)].reply == "{\"choice\": 80}" and got.kinds == {(3, 0, 1): "out of range"}
    assert got.calls[(3, 0, 2)].finish_reason == "length"


@pytest.mark.e2e
def test_the_calls_a_reader_held_make_the_browser_part_the_file_makes(logs, monkeypatch):
    """The seat calls ``read_log`` held as it read a log (``HeldCalls``: the first sessions', the ones the
    transcripts show) are the file's: the browser's part is the same, byte for byte, with fewer lines read again."""
    from econarena_evals.log import transcripts
    from econarena_evals.log.evallog import HeldCalls
    from econarena_evals.log.transcripts import transcript_sessions
    from econarena_evals.report import html as report_html

    read_again: list[int] = []
    lines_at = transcripts.lines_at

    def counted(path, offsets):
        read_again.append(len(offsets))
        return lines_at(path, offsets)

    monkeypatch.setattr(transcripts, "lines_at", counted)
    held_any = False
    for path in sorted(logs.glob("*.jsonl")):
        for limit in (1, 2, None):
            held = HeldCalls(limit)
            log = read_log(path, held)
            if not log.players or not log.calls:
                continue
            assert set(held.by_session) == set(transcript_sessions(log, limit))
            read_again.clear()
            with_held = report_html.log_piece(log, limit, held)
            fewer = sum(read_again)
            read_again.clear()
            from_file = report_html.log_piece(read_log(path), limit)
            assert (with_held.keep, with_held.head, with_held.body, with_held.calls) == (
                from_file.keep, from_file.head, from_file.body, from_file.calls)
            assert with_held.kept == from_file.kept
            assert fewer < sum(read_again)
            held_any = True
    assert held_any
