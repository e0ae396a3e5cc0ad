"""log/evallog.status_of: a log's status, as the summary, the report and econarena-run name it."""
from __future__ import annotations

from pathlib import Path

from econarena_evals.log.evallog import EvalLog, status_of


def log(**fields) -> EvalLog:
    return EvalLog(path=Path("x.jsonl"), **fields)


def test_a_stop_says_its_cause_before_anything_else():
    assert status_of(log(stop={"stopped": "quota"}, final_report={"eas": 1})) == "stopped: quota"
    assert status_of(log(stop={})) == "stopped: early"


def test_no_final_report_and_no_stop_is_partial():
    assert status_of(log(sessions=[{"errored": False}])) == "partial"


def test_one_errored_session_makes_the_log_errored_and_none_finished():
    assert status_of(log(final_report={}, sessions=[{"errored": False}, {"errored": True}])) == "errored"
    assert status_of(log(final_report={}, sessions=[])) == "errored"  # nothing measured
    assert status_of(log(final_report={}, sessions=[{"errored": False}])) == "finished"
