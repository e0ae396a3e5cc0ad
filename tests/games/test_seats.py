"""`seats` works from 2 to 10 in every game, and anything else is refused before any call."""
from __future__ import annotations

import json
import subprocess

import pytest
from test_bad_input import make_eval

from econarena_evals.games import cell as make_cell
from econarena_evals.games import session_from_sample
from econarena_evals.log.evallog import read_log

from conftest import REGISTRY, base_env, cli, run_cli


@pytest.mark.parametrize("cell", ["beauty_L", "auction_L", "fpauction_L"])
@pytest.mark.parametrize("seats", [3, 7])
@pytest.mark.e2e
def test_nash_self_play_at_other_table_sizes(cell, seats, tmp_path):
    log_path = tmp_path / "log.jsonl"
    run_cli([cli("oaieval"), "econarena/nash", f"econarena.{cell}", "--registry_path", str(REGISTRY),
             "--record_path", str(log_path), "--max_samples", "3", "--extra_eval_params", f"seats={seats}"],
            base_env())
    log = read_log(log_path)
    report = log.final_report
    assert report["sessions"] == 3 and report["errored_sessions"] == 0
    assert (report["rationality"], report["ne_proximity"], report["rule_following"]) == (1, 1, 1)
    assert report["win_rate"] == pytest.approx(1 / seats)
    assert report["eas"] == pytest.approx((4 + 1 / seats) / 5)
    assert all(len(r["seats"]) == seats for r in log.runs)
    prompts = [json.loads(line)["data"]["prompt"] for line in open(log_path) if '"type": "sampling"' in line]
    assert len(prompts) == 3 * 10 * seats
    text = prompts[0][-1]["content"]
    assert (f"with {seats} players" in text) or (f"of {seats} bidders" in text), text[:200]


@pytest.mark.parametrize("seats", ["0", "1", "11"])
@pytest.mark.parametrize("cell", ["beauty_L", "auction_L", "fpauction_L"])
def test_unsupported_table_sizes_are_refused_before_any_call(cell, seats):
    with pytest.raises(ValueError, match="seats must be an integer from 2 to 10"):
        make_eval(1, cell, seats=seats)


@pytest.mark.e2e
def test_the_real_cli_refuses_an_unsupported_table_size(tmp_path):
    log_path = tmp_path / "log.jsonl"
    proc = subprocess.run([cli("oaieval"), "econarena/nash", "econarena.beauty_L", "--registry_path", str(REGISTRY),
                           "--record_path", str(log_path), "--extra_eval_params", "seats=11"],
                          env=base_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "seats must be an integer from 2 to 10" in proc.stderr
    assert not log_path.exists() or '"sampling"' not in log_path.read_text()


def test_extra_seats_get_reproducible_values_and_fewer_seats_the_first_ones():
    line = json.loads((REGISTRY / "data/econarena/auction_L_dev.jsonl").read_text().splitlines()[0])
    seven = make_cell({"game": "auction", "seats": 7})
    a, b = session_from_sample(line, seven), session_from_sample(line, seven)
    assert a == b and all(len(run) == 7 for run in a.drawn.values)
    assert [list(run[:5]) for run in a.drawn.values] == line["values"][:10]
    three = session_from_sample(line, make_cell({"game": "auction", "seats": 3}))
    assert [list(run) for run in three.drawn.values] == [r[:3] for r in line["values"][:10]]
