"""Bad input gets a clear error before any call, and bad files never crash the report tools."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from econarena_evals.log.evallog import read_log

from conftest import REGISTRY, base_env, cli, run_cli

BAD_ARGS = [
    (1, {"bogus": "1"}, "unknown eval arg(s) bogus; EconArena takes:"),
    (1, {"n_sesions": "3"}, "unknown eval arg(s) n_sesions; to play fewer sessions, oaieval's --max_samples N plays the first N; EconArena takes:"),
    (1, {"temperature": "abc"}, "eval arg temperature must be a number, got 'abc'"),
    (1, {"temperature": "-5"}, "temperature must be a number from 0 to 2"),
    (1, {"max_tokens": "-1"}, "max_tokens must be a positive integer"),
    (1, {"max_tokens": "abc"}, "eval arg max_tokens must be an integer, got 'abc'"),
    (1, {"pass_seed": "maybe"}, "pass_seed must be true or false"),
    (1, {"seats": "abc"}, "eval arg seats must be an integer, got 'abc'"),
    (1, {"c_bar_min": "200"}, "invalid cell parameters"),
    (1, {"call_timeout_s": "0"}, "call_timeout_s > 0"),
    (3, {"seats": "2"}, "3 completion fn(s) for 2 seats"),
    # an auction's parameter on a beauty contest would be left out, the run playing without it
    (1, {"fee": "3"}, "eval arg(s) fee is not a parameter of the beauty game, which would play without it"),
]


def make_eval(n_fns: int, cell: str, **args):
    """The eval as oaieval builds it: the registry's args, then --extra_eval_params' strings on top."""
    from evals.api import CompletionFn
    from evals.registry import Registry

    from econarena_evals.run.eval import EconArena

    class Idle(CompletionFn):  # never called: every refusal comes before any call
        def __call__(self, prompt, **kwargs):
            raise AssertionError("called")

    registry = Registry()
    registry.add_registry_paths([REGISTRY])
    spec = registry.get_eval(f"econarena.{cell}")
    return EconArena(completion_fns=[Idle() for _ in range(n_fns)], eval_registry_path=spec.registry_path, name=spec.key,
                     seed=1, registry=registry, **{**spec.args, **args})


@pytest.mark.parametrize("n_fns,args,message", BAD_ARGS)
def test_bad_eval_args_are_refused_with_a_clear_message(n_fns, args, message):
    with pytest.raises(ValueError) as refused:
        make_eval(n_fns, "beauty_L", **args)
    assert message in str(refused.value)


def test_a_beauty_contests_parameters_on_an_auction_are_refused_and_its_own_taken():
    with pytest.raises(ValueError, match=r"eval arg\(s\) c_bar_max, c_bar_min are not a parameter of the auction game"):
        make_eval(1, "auction_L", c_bar_min="20", c_bar_max="60")
    assert make_eval(1, "auction_L", fee="3").cell.params.fee == 3


def test_opponent_cells_refuse_a_table_too_small_for_their_opponents():
    with pytest.raises(ValueError, match="and 4 opponent"):
        make_eval(1, "auction_L_vs_rational", seats="3")


@pytest.mark.parametrize("fns,params,message", [
    ("econarena/nash", "temperature=abc", "eval arg temperature must be a number, got 'abc'"),  # a bad value
    (",".join(["econarena/nash"] * 3), "seats=2", "3 completion fn(s) for 2 seats"),  # too many players
])
@pytest.mark.e2e
def test_the_real_cli_refuses_before_any_call(fns, params, message, tmp_path):
    log = tmp_path / "log.jsonl"
    proc = subprocess.run([cli("oaieval"), fns, "econarena.beauty_L", "--registry_path", str(REGISTRY),
                           "--record_path", str(log), "--extra_eval_params", params],
                          env=base_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2  # refused before any call
    assert f"econarena: {message}" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-1500:]
    assert not log.exists() or '"sampling"' not in log.read_text()


@pytest.mark.e2e
def test_logs_torn_inside_a_character_or_binary_files_do_not_crash_the_report_tools(tmp_path):
    good = tmp_path / "logs" / "good.jsonl"
    good.parent.mkdir()
    run_cli([cli("oaieval"), "econarena/random", "econarena.beauty_L", "--registry_path", str(REGISTRY),
             "--record_path", str(good), "--max_samples", "3"], base_env())
    raw = good.read_bytes()
    cut = raw[: raw.rindex(b'"type": "econarena_session"')]
    # a run killed while writing a line of model text: the tear falls inside a UTF-8 character
    (tmp_path / "logs" / "torn.jsonl").write_bytes(cut + json.dumps({"x": "é😀"}, ensure_ascii=False).encode()[:-4])
    (tmp_path / "logs" / "binary.jsonl").write_bytes(bytes(range(256)) * 4)
    assert any("not JSON" in p for p in read_log(tmp_path / "logs" / "torn.jsonl").problems)
    summary = subprocess.run([cli("econarena-summary"), str(tmp_path / "logs")], env=base_env(),
                             capture_output=True, text=True, timeout=120)
    assert summary.returncode == 0, summary.stderr
    assert "binary.jsonl: skipped" in summary.stderr
    report = run_cli([cli("econarena-report"), str(tmp_path / "logs"), "--out", str(tmp_path / "out")], base_env())
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert {n["status"] for n in data["inputs"]} >= {"used", "skipped"}, report.stderr


@pytest.mark.parametrize("params", ["temprature=0", "resume_from=/nonexistent/log.jsonl"])
@pytest.mark.e2e
def test_a_refused_run_leaves_no_log_behind(params, tmp_path):
    """Refused before any call (a typo, a resume from a log that is not there): one line, exit 2,
    and no log holding a spec alone where the reports and the resume would find it."""
    log = tmp_path / "logs" / "refused.jsonl"
    done = run_cli([cli("oaieval"), "econarena/nash", "econarena.beauty_L", "--registry_path", str(REGISTRY),
                    "--record_path", str(log), "--extra_eval_params", params], base_env(), returncode=2)
    assert len([x for x in done.stderr.splitlines() if x.startswith("econarena: ")]) == 1
    assert not log.exists()


@pytest.mark.e2e
def test_a_refused_run_with_evals_default_path_leaves_no_folder_behind():
    """With no --record_path, evals writes /tmp/evallogs/<run id>_econarena/nash_<eval>.jsonl: the
    "/" of the fn's name makes a folder of the run id, which goes with the refused run's log."""
    done = run_cli([cli("oaieval"), "econarena/nash", "econarena.beauty_L", "--registry_path", str(REGISTRY),
                    "--extra_eval_params", "temprature=0"], base_env(), returncode=2)
    run_id = re.search(r"Run started: (?:\x1b\[[0-9;]*m)?(\w+)", done.stderr).group(1)
    assert len([x for x in done.stderr.splitlines() if x.startswith("econarena: ")]) == 1
    assert not list(Path("/tmp/evallogs").glob(f"{run_id}*"))


@pytest.mark.parametrize("cell,args,sample", [
    ("beauty_L", {"c_bar_min": "50"}, {"session": 0, "c_bar": 15}),
    ("auction_L", {"value_max": "20"}, {"session": 0, "values": [[50] * 5] * 10}),
])
def test_a_samples_file_drawn_for_other_args_is_refused_saying_how_to_draw_one(cell, args, sample):
    from econarena_evals.games import session_from_sample

    arena = make_eval(1, cell, **args)
    with pytest.raises(ValueError, match="drawn for other args") as refused:
        session_from_sample(sample, arena.cell)
    assert "python -m econarena_evals.run.make_samples --registry YOUR_REGISTRY" in str(refused.value)
