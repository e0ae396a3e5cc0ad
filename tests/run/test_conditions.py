"""Conditions kept apart (contract §9): one column per condition, finished beats partial, overall over
default self-play columns only. Logs are made by the real oaieval."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from econarena_evals.log.evallog import read_log
from econarena_evals.run.conditions import condition_of, differences

from conftest import ERRORED, REGISTRY, base_env, cli, run_cli
from openai_server import OpenAIServer
from policies import scripted

PLAYER = "econarena/random"
ARENA = "beauty_L (vs econarena/nash)"  # the column is named by the opponents


def oaieval(fns: str, eval_name: str, log: Path, samples: int, params: str = "") -> Path:
    args = [cli("oaieval"), fns, eval_name, "--registry_path", str(REGISTRY), "--record_path", str(log),
            "--max_samples", str(samples)]
    run_cli(args + (["--extra_eval_params", params] if params else []), base_env())
    return log


def truncate(src: Path, dst: Path, sessions: int) -> None:
    """A run stopped after ``sessions`` finished sessions: no final report."""
    kept, seen = [], 0
    for line in src.read_text().splitlines():
        if seen == sessions:
            break
        if "final_report" not in line:
            kept.append(line)
        seen += '"type": "econarena_session"' in line
    dst.write_text("\n".join(kept) + "\n")


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    d = tmp_path_factory.mktemp("conditions")
    logs = {
        "beauty_L": oaieval(PLAYER, "econarena.beauty_L", d / "dev.jsonl", 4),
        "beauty_L.test": oaieval(PLAYER, "econarena.beauty_L.test.v0", d / "test.jsonl", 6),
        "beauty_L (temperature=0)": oaieval(PLAYER, "econarena.beauty_L", d / "t0.jsonl", 4, "temperature=0"),
        "beauty_L (seats=4)": oaieval(PLAYER, "econarena.beauty_L", d / "seats4.jsonl", 4, "seats=4"),
        ARENA: oaieval(f"{PLAYER},econarena/nash", "econarena.beauty_L", d / "arena.jsonl", 4),
    }
    # a newer run of the test condition, stopped after 3 sessions
    newer = oaieval(PLAYER, "econarena.beauty_L.test.v0", d / "newer_full.jsonl", 6)
    truncate(newer, d / "newer_partial.jsonl", 3)
    newer.unlink()
    out = d / "report"
    run_cli([cli("econarena-report"), str(d), "--out", str(out)], base_env())
    return logs, d, json.loads((out / "report.json").read_text())


@pytest.mark.e2e
def test_one_column_per_condition_with_each_logs_figures(made):
    logs, _, data = made
    mine = {c["column"]: c for c in data["conditions"] if c["player"] == PLAYER}
    assert set(mine) == set(logs)
    for column, path in logs.items():
        report = read_log(path).final_report
        assert mine[column]["log"] == str(path)
        for metric in ("eas", "rationality", "ne_proximity", "win_rate", "rule_following", "convergence"):
            assert mine[column]["metrics"][metric]["mean"] == pytest.approx(report[metric], abs=1e-12), (column, metric)
        assert mine[column]["sessions"] == report["sessions"]


@pytest.mark.e2e
def test_the_complete_log_beats_the_newer_partial_one(made):
    logs, d, data = made
    status = {Path(n["file"]).name: n for n in data["inputs"]}
    assert status["test.jsonl"]["status"] == "used"
    assert status["newer_partial.jsonl"]["status"] == "superseded"
    assert "partial" in status["newer_partial.jsonl"]["why"] and "test.jsonl" in status["newer_partial.jsonl"]["why"]


@pytest.mark.e2e
def test_overall_averages_default_self_play_columns_only(made):
    logs, _, data = made
    dev = read_log(logs["beauty_L"]).final_report["eas"]
    assert data["overall"][PLAYER]["columns"] == 1
    assert data["overall"][PLAYER]["eas"] == pytest.approx(dev)
    groups = data["overall_groups"]
    assert groups["overall (test split)"][PLAYER]["eas"] == pytest.approx(
        read_log(logs["beauty_L.test"]).final_report["eas"])
    assert groups["overall (arena and opponents)"][PLAYER]["eas"] == pytest.approx(
        read_log(logs[ARENA]).final_report["eas"])


def test_call_policy_args_do_not_change_the_condition_and_numbers_are_spelled_once():
    base = {"eval_name": "econarena.beauty_L.dev.v0", "completion_fns": ["x"],
            "run_config": {"seed": 20220722, "eval_spec": {"args": {"game": "beauty", "temperature": 0.7}}}}
    other = json.loads(json.dumps(base))
    other["run_config"]["eval_spec"]["args"].update(call_timeout_s=3, max_attempts="9", temperature="0.7")
    assert condition_of(base) == condition_of(other)
    other["run_config"]["eval_spec"]["args"]["temperature"] = 0
    assert differences(condition_of(base), condition_of(other)) == ["temperature: 0.7 vs 0"]


def test_args_are_taken_as_the_eval_parses_them_and_a_bad_one_as_it_is_spelled():
    def spec(**args):
        return {"eval_name": "econarena.beauty_L.dev.v0", "completion_fns": ["x"],
                "run_config": {"seed": 20220722, "eval_spec": {"args": {"game": "beauty", **args}}}}

    # the eval reads yes, true and 1 as true, the default: one condition with the run that gave none
    assert condition_of(spec(pass_seed="yes")) == condition_of(spec(pass_seed="true")) == condition_of(spec())
    assert condition_of(spec(runs="10", prize=100)) == condition_of(spec(runs=10.0))
    assert differences(condition_of(spec(pass_seed="no")), condition_of(spec())) == ["pass_seed: False vs True"]
    # an arg the eval would refuse (a hand-edited log) keeps its own spelling and its own condition
    assert condition_of(spec(pass_seed="maybe")).arg("pass_seed") == "maybe"
    assert differences(condition_of(spec(pass_seed="maybe")), condition_of(spec()))


@pytest.mark.e2e
def test_a_newer_run_where_every_session_errored_does_not_replace_a_measured_one(tmp_path):
    """The same condition twice: measured against a live endpoint, then rerun once it is down (the
    same endpoint: another base URL would be another player)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    endpoint = OpenAIServer(scripted).start()
    for name in ("measured", "dead"):
        if name == "dead":
            endpoint.stop()
        env = base_env() | {"OPENAI_BASE_URL": endpoint.base_url, "OPENAI_API_KEY": "sk-local"}
        run_cli([cli("oaieval"), "econarena/chat:gpt-4", "econarena.beauty_L", "--registry_path", str(REGISTRY),
                 "--record_path", str(logs / f"{name}.jsonl"), "--max_samples", "2", "--extra_eval_params",
                 "backoff_base_s=0.01,backoff_cap_s=0.02"], env, returncode=ERRORED if name == "dead" else 0)
    assert read_log(logs / "dead.jsonl").final_report["errored_sessions"] == 2
    out = tmp_path / "report"
    run_cli([cli("econarena-report"), str(logs), "--out", str(out)], base_env())
    data = json.loads((out / "report.json").read_text())
    status = {Path(n["file"]).name: n for n in data["inputs"]}
    assert status["measured.jsonl"]["status"] == "used"
    assert status["dead.jsonl"]["status"] == "superseded" and "every session errored" in status["dead.jsonl"]["why"]
    [row] = data["conditions"]
    assert row["sessions"] == 2 and row["metrics"]["eas"]["mean"] is not None


@pytest.mark.e2e
def test_opponent_cells_report_the_evaluated_player_not_the_yardsticks(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for player in ("econarena/nash", "econarena/shade"):
        oaieval(player, "econarena.auction_L_vs_rational", logs / f"{player.split('/')[1]}.jsonl", 3)
    out = tmp_path / "report"
    run_cli([cli("econarena-report"), str(logs), "--out", str(out)], base_env())
    data = json.loads((out / "report.json").read_text())
    rows = {(c["player"], c["column"]): c for c in data["conditions"]}
    assert set(rows) == {("econarena/nash", "auction_L_vs_rational"), ("econarena/shade", "auction_L_vs_rational")}
    nash_log = read_log(logs / "nash.jsonl")
    assert rows[("econarena/nash", "auction_L_vs_rational")]["metrics"]["eas"]["mean"] == pytest.approx(
        nash_log.final_report["eas"])
    assert {(c["a"], c["b"]) for c in data["comparisons"]} == {("econarena/nash", "econarena/shade")}


@pytest.mark.e2e
def test_equal_settings_spelled_two_ways_are_one_column(tmp_path):
    """``pass_seed=yes`` and ``pass_seed=true`` play alike (the eval parses both as true): one
    condition, one column in the summary and in the report's leaderboard, whatever the spelling."""
    for spelling in ("yes", "true"):
        oaieval("econarena/nash", "econarena.beauty_L", tmp_path / f"seed_{spelling}.jsonl", 2, f"pass_seed={spelling}")
    logs = [read_log(tmp_path / f"seed_{s}.jsonl") for s in ("yes", "true")]
    assert [log.spec["run_config"]["eval_spec"]["args"]["pass_seed"] for log in logs] == ["yes", "true"]
    assert condition_of(logs[0].spec, logs[0].settings) == condition_of(logs[1].spec, logs[1].settings)

    summary = run_cli([cli("econarena-summary"), str(tmp_path)], base_env())
    rows = [line.split("  ")[0:2] for line in summary.stdout.splitlines() if line.startswith("econarena/nash")]
    assert len(rows) == 1, summary.stdout
    assert "superseded: a newer log of the same condition" in summary.stderr

    out = tmp_path / "report"
    run_cli([cli("econarena-report"), str(tmp_path), "--out", str(out)], base_env())
    data = json.loads((out / "report.json").read_text())
    assert [(d["player"], d["column"]) for d in data["conditions"]] == [("econarena/nash", "beauty_L")]
    lines = (out / "report.md").read_text().splitlines()
    header = lines[lines.index("## Leaderboard: EconArena Score (EAS)") + 2]
    assert [cell.strip() for cell in header.strip("|").split("|")][1:2] == ["beauty_L"]
    assert "pass_seed" not in header
