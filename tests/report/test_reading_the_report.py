"""What a new reader of the summary and the report meets first: short column labels with the whole
condition one step away (a legend), columns in the eval sets' order, inputs named by their path
and player, rule breaks named as every other table names the player, τ said to be a bound where
it is one, and the winning seats said as seats. The logs are made here from the fixture logs."""
from __future__ import annotations

import contextlib
import html
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from browser import browse, fragment
from report_logs import ENDPOINT, OLDLOGS, SCHEMA, chat_player, rows_of, write

from econarena_evals.core.depth import TAU_MAX
from econarena_evals.report import build, summary
from econarena_evals.report.columns import (
    NOTE_MAX,
    NOTES_MAX,
    column_label,
    column_name,
    condition_text,
    registry_defaults,
)
from econarena_evals.report.markdown import md as md_text
from econarena_evals.report.selection import select
from econarena_evals.run.conditions import Condition

LABEL = "beauty_L (max_tokens=128, constrained)"
FULL_SCHEMA = json.dumps(SCHEMA, sort_keys=True, separators=(",", ":"))
PLAYER = f"econarena/random @ {ENDPOINT}"


def run_summary(*paths: Path) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert summary.main([str(p) for p in paths]) == 0
    return out.getvalue()


def run_report(out: Path, *paths: Path) -> tuple[dict, str, str]:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert build.main([str(p) for p in paths] + ["--out", str(out), "--references", "none"]) == 0
    return (json.loads((out / "report.json").read_text(encoding="utf-8")),
            (out / "report.md").read_text(encoding="utf-8"), (out / "report.html").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Self-play logs of the fixtures, plus one beauty_L run by a chat fn told max_tokens and a JSON
    schema, in a folder of its own under the same name as the self-play beauty_L log."""
    d = tmp_path_factory.mktemp("reading")
    logs = d / "logs"
    shutil.copytree(OLDLOGS, logs / "self-play")
    chat_player(logs / "constrained" / "econarena_random.econarena.beauty_L.jsonl",
                {"max_tokens": 128, "response_format": SCHEMA})
    report, md, page = run_report(d / "report", logs)
    return logs, run_summary(logs), report, md, page, d / "report"


def test_a_long_completion_arg_is_said_in_a_word_and_in_full_in_the_legend(made):
    logs, text, report, md, page, _ = made
    table = text.split("\nmean [95 %")[0].splitlines()
    row = next(line for line in table if line.startswith(PLAYER))
    assert row.split("  ")[1].strip() == LABEL or LABEL in row
    assert '"schema"' not in "\n".join(table) and len(row) < 300  # the column is its label, not the JSON
    said = {line.split(" = ", 1)[0].strip(): line.split(" = ", 1)[1] for line in text.splitlines()
            if line.startswith("  ") and " = econarena." in line}
    assert said == {LABEL: f"econarena.beauty_L.dev.v0: max_tokens=128, response_format={FULL_SCHEMA}; "
                           "the registry's args otherwise"}
    columns = {c["label"]: c for c in report["columns"]}
    assert columns[LABEL]["abbreviated"] and FULL_SCHEMA in columns[LABEL]["condition"]
    assert json.loads(columns[LABEL]["completion_args"]["evaluated"]["response_format"]) == SCHEMA
    assert not columns["beauty_L"]["abbreviated"] and columns["beauty_L"]["opponents"] == []
    assert any(c["column"] == LABEL and c["player"] == PLAYER for c in report["conditions"])
    legend = md.split("### Columns")[1].split("\n## ")[0]
    assert f"| {md_text(LABEL)} | {md_text(columns[LABEL]['condition'])} |" in legend
    assert "## Leaderboard" in md and LABEL in md.split("## Leaderboard")[1].splitlines()[2]
    assert f"<td>{html.escape(LABEL)}</td><td>{html.escape(columns[LABEL]['condition'])}</td>" in page


def test_labels_are_short_unique_and_the_same_in_any_order(tmp_path):
    other = {**SCHEMA, "schema": {**SCHEMA["schema"], "properties": {"choice": {"type": "integer"}}}}
    a = chat_player(tmp_path / "a" / "x.jsonl", {"max_tokens": 128, "response_format": SCHEMA})
    b = chat_player(tmp_path / "b" / "x.jsonl", {"max_tokens": 128, "response_format": other})
    c = chat_player(tmp_path / "c" / "x.jsonl", {"max_tokens": 128})
    # the same settings spelled otherwise: one condition, so one column (the older log superseded)
    same = chat_player(tmp_path / "d" / "x.jsonl", {"response_format": dict(reversed(list(SCHEMA.items()))),
                                                    "max_tokens": "128"})
    named = []
    for order in ([a, b, c, same], [same, c, b, a]):
        chosen, notes = select(order)
        named.append({(str(ch.log.path), ch.column) for ch in chosen})
        assert len(chosen) == 3 and len({ch.column for ch in chosen}) == 3
        assert sum(n["status"] == "superseded" for n in notes) == 1
    assert named[0] == named[1]
    labels = {col for _, col in named[0]}
    assert "beauty_L (max_tokens=128)" in labels
    tagged = sorted(col for col in labels if col.startswith(LABEL))
    assert len(tagged) == 2 and all(re.fullmatch(re.escape(LABEL) + r" #[0-9a-f]{6}", col) for col in tagged)


def test_a_long_value_without_a_word_is_its_key_and_a_tag():
    long_stop = ["\n\n###", "Observation:", "</answer>", "END OF REPLY"]
    args = tuple(sorted(registry_defaults("econarena.beauty_L.dev.v0").items()))  # the registry's, as a log has them
    cond = Condition("econarena.beauty_L.dev.v0", ("econarena/chat:m",), args, None,
                     ((("stop", json.dumps(long_stop, sort_keys=True, separators=(",", ":"))),),))
    label = column_label(cond)
    assert re.fullmatch(r"beauty_L \(.*stop#[0-9a-f]{6}\)", label) and '"Observation' not in label
    assert "Observation:" in column_name(cond) and "Observation:" in condition_text(cond)
    short = Condition("econarena.beauty_L.dev.v0", ("econarena/chat:m",), args, None, ((("max_tokens", 128.0),),))
    assert column_label(short).endswith("max_tokens=128)") and len("max_tokens=128") <= NOTE_MAX


def test_many_settings_show_the_first_few_then_how_many_more_and_a_tag():
    """A label of every setting ran past 140 characters: the first that fit, then a count and a tag."""
    base = dict(registry_defaults("econarena.beauty_L.dev.v0"))
    many = {**base, "history_runs": 2.0, "prize": 50.0, "seats": 7.0, "temperature": 0.2, "runs": 12.0}
    label = column_label(Condition("econarena.beauty_L.dev.v0", ("econarena/chat:m",), tuple(sorted(many.items())),
                                   None, ((("top_p", 0.9), ("frequency_penalty", 0.1)),)))
    assert len(label) <= len("beauty_L ()") + NOTES_MAX and re.search(r"; \d+ more #[0-9a-f]{6}\)$", label), label
    other = {**many, "temperature": 0.3}  # the same first notes, another hidden one: another tag
    assert column_label(Condition("econarena.beauty_L.dev.v0", ("econarena/chat:m",), tuple(sorted(other.items())),
                                  None, ((("top_p", 0.9), ("frequency_penalty", 0.1)),))) != label


def test_columns_follow_the_eval_sets_and_unknown_cells_come_after_by_name(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(OLDLOGS, logs)
    for cell in ("zz_mine", "aa_mine"):  # cells no eval set lists
        rows = rows_of(OLDLOGS / "econarena_nash.econarena.beauty_L.jsonl")
        rows[0]["spec"]["eval_name"] = f"econarena.{cell}.dev.v0"
        rows[0]["spec"]["run_config"]["eval_spec"]["key"] = f"econarena.{cell}.dev.v0"
        write(logs / f"{cell}.jsonl", rows)
    expected = ["beauty_L", "beauty_hist", "auction_L", "auction_hist", "beauty_L_vs_rational", "aa_mine", "zz_mine"]
    chosen, _ = select([logs])
    assert list(dict.fromkeys(c.column for c in chosen)) == expected
    lines = run_summary(logs).splitlines()
    rows = [line.split()[1] for line in lines[2:lines.index(next(x for x in lines if x.startswith("mean [")))]]
    assert list(dict.fromkeys(rows)) == expected
    report, md, page = run_report(tmp_path / "report", logs)
    assert [c["label"] for c in report["columns"]] == expected
    head = md.split("## Leaderboard")[1].split("\n\n")[1].splitlines()[0]
    assert [h.strip().replace("\\", "") for h in head.strip("|").split("|")][1:len(expected) + 1] == expected
    index = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
                       .group(1))["index"]
    assert list(dict.fromkeys(L["col"] for L in index)) == expected  # the session browser's picker too


def test_inputs_are_named_by_their_path_under_the_folder_given_and_their_player(made):
    logs, _, report, md, page, _ = made
    assert report["inputs_folder"] == str(logs.absolute())
    paths = {n["path"]: n for n in report["inputs"]}
    mine = paths["constrained/econarena_random.econarena.beauty_L.jsonl"]
    assert mine["player"] == f"{PLAYER} (econarena/chat:m)" and mine["status"] == "used"
    assert paths["self-play/econarena_random.econarena.beauty_L.jsonl"]["player"] == "econarena/random"
    inputs = md.split("## Inputs")[1]
    assert f"| {md_text(mine['path'])} | {md_text(mine['player'])} | used |" in inputs
    assert f"| {md_text('self-play/econarena_random.econarena.beauty_L.jsonl')} | econarena/random | used |" in inputs
    section = page[page.index('id="inputs"'):]
    assert "<td data-v=\"constrained/econarena_random.econarena.beauty_L.jsonl\">constrained/" in section
    assert f"<td data-v=\"{html.escape(mine['player'])}\">{html.escape(mine['player'])}</td>" in section


def test_rule_breaks_by_kind_name_the_player_as_every_other_table_does(made):
    _, _, report, _, page, _ = made
    assert PLAYER in report["rule_breaks"] and "econarena/random" in report["rule_breaks"]
    assert report["rule_breaks"][PLAYER] == {LABEL: {**{k: 0 for k in report["rule_breaks"][PLAYER][LABEL]},
                                                     "seats": 100}}
    kinds = page[page.index("<h3>Rule breaks by kind</h3>"):page.index("<h3>Example replies</h3>")]
    assert f'<td data-v="{html.escape(PLAYER)}">{html.escape(PLAYER)}</td>' in kinds


def depth_cells(md: str) -> dict[tuple[str, str], str]:
    """report.md's depth table (under the leaderboard) as {(player, column): cell}."""
    table = md[md.index("### Depth of reasoning τ"):].split("\n\n")[2].splitlines()
    head = [c.strip() for c in table[0].strip("|").split("|")]
    assert head[0] == "player" and table[1].startswith("|---|")
    cells = {}
    for line in table[2:]:
        row = [c.strip() for c in line.strip("|").split(" | ")]
        cells.update({(row[0], col): cell for col, cell in zip(head[1:], row[1:])})
    return cells


def test_a_depth_at_the_fits_bound_says_it_is_the_bound(made):
    _, _, report, md, page, _ = made
    cells = depth_cells(md)
    nash = report["depth"]["econarena/nash"]["beauty_L"]
    assert nash["tau_at_bound"] and nash["tau"] == TAU_MAX
    said = f"τ = {TAU_MAX:.2f} (at the fit's upper bound, τ ≤ {TAU_MAX:g}: a bound, not a depth)"
    assert cells[("econarena/nash", md_text("beauty_L"))] == said
    depth_part = page[page.index('<h3 id="depth">'):page.index('id="columns"')]
    assert f"<td>{html.escape(said)}</td>" in depth_part
    at_zero = report["depth"]["econarena/random"]["beauty_L"]  # uniform choices: no step of reasoning
    assert at_zero["tau_at_bound"] and at_zero["tau"] == 0
    assert cells[("econarena/random", md_text("beauty_L"))] == "τ = 0.00 (at the fit's lower bound, τ ≥ 0)"
    inside = report["depth"]["econarena/random"]["beauty_hist"]
    assert not inside["tau_at_bound"] and 0 < inside["tau"] < TAU_MAX
    assert cells[("econarena/random", md_text("beauty_hist"))] == f"τ = {inside['tau']:.2f}"


def test_the_plots_are_listed_in_the_columns_order_as_every_table_is(made):
    """The cells' plots follow the columns (the eval sets' order: beauty_L before auction_L), in
    report.md and report.html alike; they were listed by name (auction_L first)."""
    _, _, report, md, page, _ = made
    cells = list(dict.fromkeys(c["cell"] for c in report["columns"]))
    assert cells[:2] == ["beauty_L", "beauty_hist"] and cells != sorted(cells)
    expected = [f"{kind}_{cell}.png" for cell in cells for kind in ("convergence", "first_run")]
    assert re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md.split("## Plots")[1]) == expected
    assert re.findall(r"<figcaption>([^<]+)</figcaption>", page) == expected
    assert list(report["plots"]) == expected


@pytest.mark.e2e  # opens the page in headless Chromium
def test_the_session_grid_says_which_seats_won_and_the_pickers_keep_the_report_order(made):
    _, _, report, _, _, out = made
    dom = browse(out / "report.html", fragment(col=LABEL, player="econarena/random", session=7))
    grid = dom[dom.index('id="sb-grid"'):dom.index('id="sb-detail"')]
    assert "<th>winning seat(s)</th>" in grid and "<th>winners</th>" not in grid
    winners = re.findall(r'<td class="run">\d+</td><td class="out">[^<]*</td><td class="out">([^<]*)</td>', grid)
    assert len(winners) == 10 and all(re.fullmatch(r"seats? \d+(, \d+)*|none", w) for w in winners)
    picker = dom[dom.index('id="sb-col"'):dom.index('id="sb-player"')]
    assert re.findall(r'<option value="([^"]*)"', html.unescape(picker)) == [c["label"] for c in report["columns"]]
    player = dom[dom.index('id="sb-player"'):dom.index('id="sb-session"')]
    assert f">{html.escape(PLAYER)}</option>" in player  # the row's label, endpoint and all


def test_the_depth_table_heads_its_figures_in_words_and_says_yes_or_no(made):
    _, _, _, md, page, _ = made
    table = md[md.index("\n## Depth of reasoning"):]  # the diagnostics table (not the one under the leaderboard)
    head = next(line for line in table.splitlines() if line.startswith("| player | column |"))
    assert head == ("| player | column | τ | τ 95 % low | τ 95 % high | σ (noise) | choices | sessions "
                    "| τ at the fit's bound |")
    after = table.splitlines()[table.splitlines().index(head) + 2:]
    rows = after[:after.index("")] if "" in after else after
    assert rows and {row.rsplit("|", 2)[1].strip() for row in rows} <= {"yes", "no"}
    assert "tau_at_bound" not in md and "ci_low" not in md and "True" not in md
    assert html.escape("τ at the fit's bound") in page and ">tau_at_bound<" not in page
