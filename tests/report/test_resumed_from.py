""""Resumed from" takes a log's place only where it resumed it: the same condition (eval, player,
args, seed; the endpoint may have been fixed), a log that had not finished, every session finished
there held in the resumed log. Otherwise both logs are used and the conflict is named, on stdout by
``econarena-summary`` (``--strict`` exits 1 on it) and in the report's inputs. The logs are made
here from a fixture log (``report_logs``); the tools are the real console scripts."""
from __future__ import annotations

import json

import pytest
from report_logs import ENDPOINT, RANDOM_BEAUTY_L, chat_player, rows_of, write

from econarena_evals.log.format import RESUMED_FROM, RUN_EVENT, SESSION_EVENT

from conftest import base_env, cli, run_cli

pytestmark = pytest.mark.e2e  # the console scripts, in their own processes

PLAYER = f"econarena/random @ {ENDPOINT}"
PLAN = {"calls": 50, "sessions": 2, "prompt_tokens": 5_000, "completion_reserved": 50 * 1024, "kept": 50,
        "counted": "characters / 4"}
SESSIONS = (7, 17)  # the fixture log's


def resumed_from(path, source, told=None):
    """The fixture log as a finished run that resumed from ``source`` wrote it (its session 7 copied)."""
    return chat_player(path, told or {"max_tokens": 1024}, copied=[7], plan={**PLAN, RESUMED_FROM: str(source)})


def cut(path, keep=SESSIONS, finished=False):
    """``path`` as a run that stopped would have left it: only the sessions ``keep``, no final report."""
    rows = [r for r in rows_of(path) if not (r.get("type") in (RUN_EVENT, SESSION_EVENT)
                                            and r["data"]["session"] not in keep)]
    return write(path, [r for r in rows if finished or "final_report" not in r])


def summary(*args, returncode=0):
    return run_cli([cli("econarena-summary"), *map(str, args)], base_env(), returncode=returncode)


def table(out):
    return out.split("\n\n")[0]


def test_logs_naming_each_other_hide_neither_and_strict_fails(tmp_path):
    logs = tmp_path / "logs"
    a, b = logs / "a.jsonl", logs / "b.jsonl"
    resumed_from(a, b, {"temperature": 0})
    resumed_from(b, a, {"temperature": 1})
    proc = summary(logs)
    rows = table(proc.stdout)
    assert "beauty_L (temperature=0)" in rows and "beauty_L (temperature=1)" in rows, proc.stdout
    assert rows.count(PLAYER) == 2 and "superseded" not in proc.stderr, proc.stdout + proc.stderr
    for log, other in ((a, b), (b, a)):
        assert (f"!! {log}: it names {other} as the log it resumed from, and that names it back: neither takes "
                "the other's place, both are used") in proc.stdout
    strict = summary("--strict", logs, returncode=1)
    assert table(strict.stdout) == rows
    assert "2 log(s) naming as resumed from a log they did not resume" in strict.stderr

    out = tmp_path / "report"
    run_cli([cli("econarena-report"), str(logs), "--out", str(out), "--references", "none", "--transcripts", "0"],
            base_env())
    inputs = {n["file"]: n for n in json.loads((out / "report.json").read_text())["inputs"]}
    assert {n["status"] for n in inputs.values()} == {"used"}
    assert "and that names it back" in inputs[str(a)]["why"] and "and that names it back" in inputs[str(b)]["why"]
    assert "and that names it back" in (out / "report.md").read_text()


def test_a_genuine_resume_takes_the_place_of_the_log_it_resumed(tmp_path):
    logs = tmp_path / "logs"
    stopped = cut(chat_player(logs / "stopped.jsonl", {"max_tokens": 1024}), keep=(7,))
    resumed = resumed_from(logs / "resumed.jsonl", stopped)
    proc = summary("--strict", logs)
    assert f"{stopped}: superseded: a finished run resumed from it, and its log is used: {resumed}" in proc.stderr
    assert table(proc.stdout).count(PLAYER) == 1 and "!!" not in proc.stdout


@pytest.mark.parametrize("case", ["another player", "finished", "a session not held", "names itself"])
def test_a_log_it_did_not_resume_is_not_hidden_and_the_conflict_named(tmp_path, case):
    logs = tmp_path / "logs"
    named = logs / "named.jsonl"
    if case == "another player":  # the path a moved run left, reused by another model's run
        named.parent.mkdir(parents=True)
        named.write_text(RANDOM_BEAUTY_L.read_text().replace("econarena/random", "econarena/nash"))
    elif case == "finished":
        chat_player(named, {"max_tokens": 1024})
    elif case == "a session not held":  # session 17 finished there; the log naming it has not got it
        cut(chat_player(named, {"max_tokens": 1024}), keep=(17,))
    resumed = resumed_from(logs / "resumed.jsonl", named if case != "names itself" else logs / "resumed.jsonl")
    if case == "a session not held":
        cut(resumed, keep=(7,), finished=True)
    proc = summary(logs)
    why = {"another player": "it is another condition (players: econarena/nash vs econarena/random; completion args",
           "finished": "it finished (nothing was left to resume)",
           "a session not held": "its finished session 17 is not in the resumed log as it finished there",
           "names itself": "it names itself as the log it resumed from"}[case]
    said = next(line for line in proc.stdout.splitlines() if line.startswith(f"!! {resumed}: "))
    assert why in said, proc.stdout
    assert f"a finished run resumed from it, and its log is used: {resumed}" not in proc.stderr
    if case == "another player":  # both models' rows
        assert "econarena/nash " in table(proc.stdout) and PLAYER in table(proc.stdout), proc.stdout
    elif case != "names itself":  # the same condition: the finished log is used, the other named for that
        assert f"{named}: superseded: " in proc.stderr and "of the same condition is used" in proc.stderr
    summary("--strict", logs, returncode=1)
