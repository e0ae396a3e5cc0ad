"""One model under all three front ends, reported together: ``econarena/human`` (seeded randomness, so
its sessions differ from one another) on beauty_L through ``oaieval``, ``inspect eval`` (the inspect
venv, named by ``ECONARENA_INSPECT_VENV``; scripts/front_end_tests.sh sets it up) and ``vf-eval``
against the served player, then one ``econarena-report`` and one ``econarena-summary`` over the
three logs: three rows, and every session's figures equal."""
from __future__ import annotations

import itertools
import json
import math
import os
from pathlib import Path

import pytest

from econarena_evals.log.evallog import read_log

from conftest import evals_bin, oaieval, run, served, vf_eval
from front_ends import METRICS

MODEL, CELL = "econarena/human", "beauty_L"
FRONT_ENDS = ("", " (inspect)", " (verifiers)")  # how each front end's row names the player


def inspect_bin() -> Path:
    venv = os.environ.get("ECONARENA_INSPECT_VENV")
    if not venv or not (Path(venv) / "bin" / "inspect").exists():
        pytest.fail("ECONARENA_INSPECT_VENV must name the inspect front end's venv (scripts/front_end_tests.sh "
                    "sets it up): this test plays one model under all three front ends")
    return Path(venv) / "bin"


def test_one_report_over_evals_inspect_and_verifiers_logs_shows_all_three_equal_per_session(tmp_path):
    logs = tmp_path / "logs"
    oaieval(MODEL, CELL, logs / "evals" / f"{CELL}.jsonl")
    done = run([str(inspect_bin() / "inspect"), "eval", f"econarena_evals/{CELL}", "--model", MODEL,
                "--log-dir", str(logs / "inspect"), "--display", "plain"])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with served(MODEL) as base_url:
        vf_eval(base_url, MODEL, logs / "verifiers", "--env.taskset.cells", f'["{CELL}"]')
    files = [logs / "evals" / f"{CELL}.jsonl", next((logs / "inspect").glob("*.eval")),
             next((logs / "verifiers").glob("*/traces.jsonl"))]

    # each log read back by the plugin's one reader: every session's six figures, re-derived from its runs
    read = [read_log(f) for f in files]
    assert [log.problems for log in read] == [[], [], []]
    per_session = [{s["session"]: s for s in log.sessions} for log in read]
    assert all(sorted(sessions) == list(range(20)) for sessions in per_session)
    for session in range(20):
        for metric in METRICS:
            ours, *theirs = (sessions[session][metric] for sessions in per_session)
            assert all(math.isclose(ours, t, abs_tol=1e-12) for t in theirs), (session, metric)
    assert len({round(s["eas"], 9) for s in per_session[0].values()}) > 5  # the sessions differ from one another

    # one report: a row per front end, each finished over the 20 sessions, the three means equal, and
    # every pair's paired difference 0 in every metric over 20 common sessions, its interval [0, 0]
    done = run([str(evals_bin() / "econarena-report"), str(logs), "--out", str(tmp_path / "report"),
                "--comparisons", "all"])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    rows = {c["player"].split(" @ ")[0]: c for c in report["conditions"]}  # " @ 127.0.0.1:PORT": the served one
    players = [MODEL + suffix for suffix in FRONT_ENDS]
    assert sorted(rows) == sorted(players) and {c["column"] for c in rows.values()} == {CELL}
    assert all(c["sessions"] == 20 and c["finished"] for c in rows.values())
    for metric in METRICS:
        means = [rows[p]["metrics"][metric]["mean"] for p in players]
        assert all(math.isclose(means[0], m, abs_tol=1e-12) for m in means), (metric, means)
    full = {c["player"].split(" @ ")[0]: c["player"] for c in report["conditions"]}
    for a, b in itertools.combinations(players, 2):
        pair = {full[a], full[b]}
        found = {c["metric"]: c for c in report["comparisons"] if {c["a"], c["b"]} == pair}
        assert sorted(found) == sorted(METRICS), (a, b)
        for c in found.values():
            assert c["sessions"] == 20 and c["diff"] == c["ci_low"] == c["ci_high"] == 0, c

    # one summary: the three rows, each finished
    done = run([str(evals_bin() / "econarena-summary"), "--strict", str(logs)])
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith(MODEL) and "finished" in line]
    assert sorted(line.split("  ")[0].split(" @ ")[0] for line in lines) == sorted(players), done.stdout
