"""The cost paid: tokens used per player and column, counted from the log, priced
at the prices given, beside the plan the run recorded; checked against what a real local server
billed. Logs made by the real oaieval against tests/openai_server.py."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from econarena_evals.log.evallog import read_log

from conftest import REGISTRY, base_env, cli, run_cli
from openai_server import OpenAIServer
from policies import scripted

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

A, B = "model-a", "model-b"  # two models at one table: each one's tokens are its own
ARENA = f"econarena/chat:{A},econarena/chat:{B}"
COLUMN = f"beauty_L (vs econarena/chat:{B} @ 127.0.0.1:"  # then the server's port
PRICE_IN, PRICE_OUT = 2.5, 10.0
OLD_LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "old_logs" / "9b70382"  # see tests/fixtures/README.md


def without_usage(n: int, payload: dict) -> tuple[int, dict, dict]:
    return 200, {k: v for k, v in payload.items() if k != "usage"}, {}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    d = tmp_path_factory.mktemp("tokens")
    server = OpenAIServer(scripted, models=(A, B)).start()
    quiet = OpenAIServer(scripted, models=(A,), answer=without_usage).start()
    try:
        env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-local"}
        run_cli([cli("oaieval"), ARENA, "econarena.beauty_L", "--registry_path", str(REGISTRY),
                 "--record_path", str(d / "arena.jsonl"), "--max_samples", "2"], env)
        env = base_env() | {"OPENAI_BASE_URL": quiet.base_url, "OPENAI_API_KEY": "sk-test-local"}
        run_cli([cli("oaieval"), f"econarena/chat:{A}", "econarena.beauty_M", "--registry_path", str(REGISTRY),
                 "--record_path", str(d / "no_usage.jsonl"), "--max_samples", "1"], env)
        sent = {m: server.usage_sent(m) for m in (A, B)}
    finally:
        server.stop()
        quiet.stop()
    summary = run_cli([cli("econarena-summary"), str(d), "--price-in", str(PRICE_IN), "--price-out",
                       str(PRICE_OUT)], base_env()).stdout
    run_cli([cli("econarena-report"), str(d), "--out", str(d / "report"), "--price-in", str(PRICE_IN),
             "--price-out", str(PRICE_OUT)], base_env())
    report = json.loads((d / "report" / "report.json").read_text())
    return d, sent, summary, report, (d / "report" / "report.md").read_text()


def cost(prompt: int, completion: int) -> float:
    return (prompt * PRICE_IN + completion * PRICE_OUT) / 1e6


def test_the_tokens_of_each_player_are_what_the_server_billed(made):
    _, sent, summary, report, _ = made
    rows = {r["player"].split(" @ ")[0]: r for r in report["tokens"]["rows"] if r["column"].startswith(COLUMN)}
    assert len(rows) == 2
    for model in (A, B):
        row, billed = rows[f"econarena/chat:{model}"], sent[model]
        assert billed["calls"] > 0 and billed["prompt_tokens"] > 0
        assert (row["seat_calls"], row["reported_calls"], row["prompt_tokens"], row["completion_tokens"],
                row["reasoning_tokens"] or 0) == (billed["calls"], billed["calls"], billed["prompt_tokens"],
                                                  billed["completion_tokens"], billed["reasoning_tokens"])
        assert row["cost"] == pytest.approx(cost(billed["prompt_tokens"], billed["completion_tokens"]), abs=1e-12)
        tokens = summary.split("\ntokens used:\n")[1]
        line = next(x for x in tokens.splitlines() if x.startswith(f"{row['player']}  {row['column']}"))
        assert f"  {billed['prompt_tokens']:,}  " in line and f"  {billed['completion_tokens']:,}  " in line
        assert f"  {row['cost']:,.4f}" in line
    total = report["tokens"]["total"]
    assert total["prompt_tokens"] == sum(sent[m]["prompt_tokens"] for m in (A, B))
    assert report["tokens"]["prices"] == {"price_in": PRICE_IN, "price_out": PRICE_OUT}


def test_the_plan_recorded_in_the_log_is_shown_beside_the_tokens(made):
    d, sent, summary, report, md = made
    plan = read_log(d / "arena.jsonl").plan
    # two sessions of beauty_L: 2 x 10 runs x 5 seats, every seat (both models) in the plan
    assert plan["calls"] == 100 == sent[A]["calls"] + sent[B]["calls"] and plan["kept"] == 0
    first = next(r for r in report["tokens"]["rows"] if r["column"].startswith(COLUMN))
    assert first["evaluated"] and first["plan"]["prompt_tokens"] == plan["prompt_tokens"]
    assert first["plan_cost"] == pytest.approx(cost(plan["prompt_tokens"], plan["completion_reserved"]), abs=1e-12)
    assert f"{plan['prompt_tokens']:,}" in summary and f"{plan['completion_reserved']:,}" in summary
    table = md.split("## Tokens and cost")[1]
    assert f"| {first['plan']['calls']} | {plan['prompt_tokens']:,} | {plan['completion_reserved']:,} |" in table


def test_calls_whose_reply_reported_no_usage_show_a_dash(made):
    _, _, summary, report, _ = made
    row = next(r for r in report["tokens"]["rows"] if r["column"] == "beauty_M")
    assert row["seat_calls"] == 50 and row["reported_calls"] == 0
    assert row["prompt_tokens"] is None and row["cost"] is None and row["plan"]["calls"] == 50
    tokens = summary.split("\ntokens used:\n")[1]
    line = next(x for x in tokens.splitlines() if "  beauty_M  " in x and x.startswith("econarena/chat"))
    assert line.split()[4:9] == ["50", "0", "-", "-", "-"]


def means(line: str) -> list[str]:
    """A summary row's words without its bracketed intervals (the old summary printed none)."""
    return re.sub(r" \[[^\]]*\]", "", line).split()


def test_old_logs_read_as_before_with_a_dash_for_the_tokens(tmp_path):
    logs = tmp_path / "old"
    shutil.copytree(OLD_LOGS, logs)
    out = run_cli([cli("econarena-summary"), str(logs), "--price-in", "1", "--price-out", "1"], base_env()).stdout
    # what the version that wrote the logs printed: every figure is computed the same today
    before = [line for line in (OLD_LOGS.parent / "9b70382.summary.txt").read_text().splitlines()
              if line.startswith("econarena/")]
    rows = {tuple(line.split()[:2]): means(line) for line in out.splitlines() if line.startswith("econarena/")}
    assert len(before) == 10 and len(rows) == 10
    for line in before:
        assert rows[tuple(line.split()[:2])] == line.split()
    assert "tokens used: none" in out  # every old log's players are built in
    run_cli([cli("econarena-report"), str(logs), "--out", str(tmp_path / "r"), "--price-in", "1"], base_env())
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["tokens"]["rows"] == [] and report["tokens"]["total"]["cost"] is None


def test_a_negative_price_is_refused_in_one_line(tmp_path):
    proc = run_cli([cli("econarena-summary"), str(OLD_LOGS), "--price-in", "-1"], base_env(), returncode=2)
    assert proc.stderr.strip().splitlines() == ["econarena-summary: --price-in must be a number of at least 0, got -1"]
