"""After a resume, the tokens table says what the log holds and what this run sent, each under its
own name: a log that kept 51 of its 100 seat calls from the log it resumed from shows 100 on its
row and 49 on the line under it, "sent by this run", beside its plan of 49 calls. The log is made
here from a fixture log (seat tags, usage, copied events); no process."""
from __future__ import annotations

import contextlib
import io

from report_logs import ENDPOINT, chat_player

from econarena_evals.log.evallog import read_log
from econarena_evals.report import build, summary
from econarena_evals.report.markdown import md
from econarena_evals.report.selection import select
from econarena_evals.report.tokens import NO_PRICES, Prices, tokens_result

PLAYER = f"econarena/random @ {ENDPOINT}"
# the plan of the resumed run: session 7 copied whole (50 calls), one call of session 17 reused
PLAN = {"calls": 49, "sessions": 2, "prompt_tokens": 4_900, "completion_reserved": 49 * 1024, "kept": 51,
        "counted": "characters / 4"}


def resumed(path):
    return chat_player(path, {"max_tokens": 1024}, usage=True, copied=[7], reused=[(17, 0, 1)], plan=PLAN)


def test_the_log_reader_tells_kept_calls_from_those_this_run_sent(tmp_path):
    log = read_log(resumed(tmp_path / "resumed.jsonl"))
    assert log.usage["econarena/random"]["calls"] == 100
    kept = log.kept_usage["econarena/random"]
    assert (kept["calls"], kept["prompt_tokens"], kept["completion_tokens"]) == (51, 5_100, 510)
    plain = read_log(chat_player(tmp_path / "plain.jsonl", {"max_tokens": 1024}, usage=True))
    assert plain.usage["econarena/random"]["calls"] == 100 and plain.kept_usage == {}


def test_the_row_counts_the_log_and_the_line_under_it_what_this_run_sent(tmp_path):
    path = resumed(tmp_path / "logs" / "resumed.jsonl")
    chosen, _ = select([path])
    prices = Prices(price_in=1.0, price_out=2.0)
    row = tokens_result(chosen, prices)["rows"][0]
    assert (row["seat_calls"], row["kept_calls"]) == (100, 51)
    assert (row["prompt_tokens"], row["completion_tokens"]) == (10_000, 1_000)
    sent = row["sent"]
    assert (sent["seat_calls"], sent["prompt_tokens"], sent["completion_tokens"]) == (49, 4_900, 490)
    assert sent["seat_calls"] == row["plan"]["calls"] and row["plan"]["kept"] == row["kept_calls"]
    assert sent["cost"] == (4_900 * 1.0 + 490 * 2.0) / 1e6 and row["cost"] == (10_000 + 2_000) / 1e6

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert summary.main([str(path.parent)]) == 0
    lines = out.getvalue().split("tokens used:")[1].splitlines()
    head = lines[1]
    at = {name: head.index(name) for name in ("seat calls", "plan: calls")}
    mine = next(i for i, line in enumerate(lines) if line.startswith(PLAYER))
    whole, this_run = lines[mine], lines[mine + 1]
    assert whole[at["seat calls"]:].split()[0] == "100" and whole[at["plan: calls"]:].strip() == ""
    assert this_run.startswith("  sent by this run")
    assert this_run[at["seat calls"]:].split()[0] == "49" and this_run[at["plan: calls"]:].split()[0] == "49"
    note = out.getvalue().split("Tokens as each")[1]  # the note under the table, wrapped at PROSE_WIDTH
    assert "'sent by this run', counts the calls the run sent itself" in " ".join(note.split())

    report = tmp_path / "report"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert build.main([str(path.parent), "--out", str(report), "--references", "none"]) == 0
    text = (report / "report.md").read_text(encoding="utf-8").split("## Tokens and cost")[1]
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    whole = next(r for r in rows if r.startswith(f"| {md(PLAYER)} |")).strip("|").split("|")
    under = rows[rows.index(next(r for r in rows if r.startswith(f"| {md(PLAYER)} |"))) + 1].strip("|").split("|")
    assert [c.strip() for c in whole[2:4]] == ["100", "100"] and whole[-1].strip() == ""
    assert under[0].strip() == "↳ *sent by this run*" and [c.strip() for c in under[2:4]] == ["49", "49"]
    assert under[-3].strip() == "49"  # plan: calls, beside what this run sent


def test_a_log_that_kept_nothing_has_one_row_with_its_plan(tmp_path):
    path = chat_player(tmp_path / "plain.jsonl", {"max_tokens": 1024}, usage=True,
                       plan={**PLAN, "calls": 100, "kept": 0})
    chosen, _ = select([path])
    row = tokens_result(chosen, NO_PRICES)["rows"][0]
    assert row["kept_calls"] == 0 and row["sent"]["seat_calls"] == row["seat_calls"] == row["plan"]["calls"] == 100
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert summary.main([str(path)]) == 0
    assert "sent by this run\n" not in out.getvalue().split("tokens used:")[1].split("Tokens as each")[0]
