"""The log states its format version, and readers take it from there (old logs state none)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from econarena_evals.log.evallog import read_log
from econarena_evals.log.format import LOG_FORMAT, PLAYERS_EVENT

from conftest import REGISTRY, base_env, cli, run_cli

OLD_LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "old_logs" / "9b70382"


@pytest.mark.e2e
def test_a_new_log_states_its_format_and_an_old_one_reads_as_format_1(tmp_path):
    log = tmp_path / "new.jsonl"
    run_cli([cli("oaieval"), "econarena/nash", "econarena.beauty_L", "--registry_path", str(REGISTRY),
             "--record_path", str(log), "--max_samples", "1"], base_env())
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    players = [r for r in rows if r.get("type") == PLAYERS_EVENT]
    assert len(players) == 1 and players[0]["data"]["format"] == LOG_FORMAT == 2
    assert read_log(log).format == 2
    old = read_log(OLD_LOGS / "econarena_nash.econarena.beauty_L.jsonl")
    assert old.format == 1 and old.settings == [] and old.final_report is not None


@pytest.mark.parametrize("stated", [99, 3, "2", True, None, 0, 2.0, [2]])
def test_a_log_of_a_format_this_version_does_not_read_is_named_and_not_read(tmp_path, stated):
    src = OLD_LOGS / "econarena_nash.econarena.beauty_L.jsonl"
    lines = src.read_text().splitlines()
    spec = json.loads(lines[0])
    players = {"run_id": spec["spec"]["run_id"], "event_id": 0, "sample_id": "econarena.players",
               "type": PLAYERS_EVENT, "data": {"players": [], "format": stated}, "created_by": "", "created_at": ""}
    log = tmp_path / "future.jsonl"
    log.write_text("\n".join([lines[0], json.dumps(players), *lines[1:]]) + "\n")
    read = read_log(log)
    assert read.unread and f"states format {json.dumps(stated)}," in read.unread and "none of it is used" in read.unread
    assert read.unread in read.problems
    assert read.runs == [] and read.sessions == [] and read.final_report is None and read.calls == 0
    assert read_log(src).unread is None
