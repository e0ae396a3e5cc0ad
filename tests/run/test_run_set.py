"""``econarena-run``: a whole eval set for one fn into a folder the user names, through the real oaieval."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import base_env, cli, run_cli

SET = ["econarena.beauty_L", "econarena.beauty_M", "econarena.beauty_H", "econarena.beauty_hist",
       "econarena.auction_L"]


def final_report(path: Path) -> dict:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return next(r["final_report"] for r in rows if "final_report" in r)


def test_a_set_goes_to_its_own_folder_and_a_second_run_keeps_every_log(tmp_path):
    out = tmp_path / "gpt-x run"
    proc = run_cli([cli("econarena-run"), "econarena/nash", "econarena", "--out", str(out), "--max_samples", "2"],
                   base_env())
    logs = sorted((out / "econarena_nash").glob("*.jsonl"))
    assert [p.stem for p in logs] == sorted(SET)
    assert all(final_report(p)["sessions"] == 2 for p in logs)
    table = [line for line in proc.stdout.splitlines() if line.startswith("econarena/nash ")]
    assert len(table) == 5 and all(line.rstrip().endswith("finished") for line in table)
    before = {p: p.stat().st_mtime_ns for p in logs}
    again = run_cli([cli("econarena-run"), "econarena/nash", "econarena", "--out", str(out), "--max_samples", "2"],
                    base_env())
    assert {p: p.stat().st_mtime_ns for p in logs} == before  # a paid log is never written over
    assert again.stderr.count(": kept ") == 5 and "oaieval econarena/nash" not in again.stderr


def test_errored_sessions_go_on_to_the_next_eval_and_exit_3(tmp_path):
    env = base_env() | {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-test"}  # nothing listens
    proc = run_cli([cli("econarena-run"), "econarena/chat:gpt-4o", "econarena", "--out", str(tmp_path),
                    "--max_samples", "1", "--extra_eval_params", "call_timeout_s=3"], env, returncode=3)
    logs = sorted((tmp_path / "econarena_chat:gpt-4o").glob("*.jsonl"))
    assert [p.stem for p in logs] == sorted(SET)
    assert all(final_report(p)["errored_sessions"] == 1 for p in logs)
    assert proc.stderr.count("econarena-run: [") == 5


def test_a_refused_run_stops_the_set(tmp_path):
    proc = run_cli([cli("econarena-run"), "econarena/nash", "econarena", "--out", str(tmp_path),
                    "--extra_eval_params", "seats=1"], base_env(), returncode=2)
    assert proc.stderr.count("econarena-run: [") == 1 and "the set stops here" in proc.stderr


def test_a_wrong_set_name_or_a_record_path_is_one_line_and_exit_2(tmp_path):
    for args in (["econarena/nash", "econarena-ful", "--out", str(tmp_path)],
                 ["econarena/nash", "econarena", "--out", str(tmp_path), "--record_path", "x.jsonl"]):
        proc = subprocess.run([cli("econarena-run"), *args], env=base_env(), capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert list(tmp_path.iterdir()) == []
