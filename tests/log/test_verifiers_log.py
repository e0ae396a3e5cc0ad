"""A run of the verifiers front end (``traces.jsonl``) read as an evals log: sessions re-scored from
their run events, missing sessions leaving it partial, every bad line named and confined to itself.
The episodes are written as the front end writes them (``verifiers_log.seat_infos``), from sessions
the table of seats plays with the built-in players (no verifiers needed)."""
from __future__ import annotations

import json
import math
import random
from pathlib import Path

from econarena_evals.core.prompts import prompt_text
from econarena_evals.games import cell as make_cell
from econarena_evals.games import draw_session
from econarena_evals.games.builtin import LevelKPlayer
from econarena_evals.log.evallog import find_logs, read_log, status_of
from econarena_evals.log.format import session_fields
from econarena_evals.log.jsonl import MAX_LINE_BYTES
from econarena_evals.log.verifiers_log import INFO_KEY, SUFFIX, seat_infos
from econarena_evals.report.summary import main as summary_main
from econarena_evals.score.metrics import METRICS
from econarena_evals.score.table import SeatReply, Table

ARGS = {"game": "beauty", "runs": 10, "seats": 5, "history_runs": 0, "prize": 100, "c_bar_min": 10, "c_bar_max": 100,
        "temperature": 0.7, "max_tokens": 1024, "samples_jsonl": "econarena/beauty_L_dev.jsonl"}
MODEL = "my-model"


def episode(session: int) -> tuple[dict, dict]:
    """One episode line as the front end writes it (level-2 play in every seat), and its session record."""
    cell = make_cell(ARGS)
    table = Table("beauty_L", cell, draw_session(random.Random(session), session, cell), [MODEL] * 5, 8)
    player, events = LevelKPlayer(k=2), []
    calls: list[list[dict]] = [[] for _ in range(5)]
    while requests := table.wave():
        replies = {r.key: SeatReply(player.reply(prompt_text(r.prompt), r.seed), "stop") for r in requests}
        for r in requests:
            calls[r.seat - 1].append({"run": r.run, "model": MODEL, "finish_reason": "stop",
                                      "usage": {"prompt_tokens": 100, "completion_tokens": 20}})
        for run in sorted({r.run for r in requests}):
            events.append(table.take(run, [replies[(run, s)] for s in range(1, 6)]))
    result = table.result([MODEL])
    record = session_fields("beauty_L", session, [MODEL], result, 0, None)
    spec = {"eval_name": "econarena.beauty_L.dev.v0", "args": ARGS, "seed": 8}
    played = [{"name": MODEL, "model": MODEL, "opponent": False, "base_url": "http://127.0.0.1:9/v1"}]
    infos = seat_infos("beauty_L", "dev", session, spec, events, record, played, [1, 2, 3, 4, 5], [result[MODEL]] * 5,
                       calls)
    traces = [{"agent": {"config": {"model": MODEL}}, "info": {INFO_KEY: info}, "rewards": {}} for info in infos]
    return {"id": f"e{session}", "env": {"id": "econarena_evals"}, "run": {"id": "run-1"}, "ok": True,
            "traces": traces[::-1]}, record  # traces in completion order, not seat order


def write_run(folder: Path, sessions: list[int], selected: list[int], extra_lines: tuple[bytes, ...] = ()) -> Path:
    run = folder / "econarena_evals--my-model--1"
    (run / "configs" / "resolved").mkdir(parents=True)
    (run / "configs" / "resolved" / "eval.json").write_text(json.dumps(
        {"env": {"taskset": {"id": "econarena_evals", "cells": ["beauty_L"], "seeds": selected}}, "model": MODEL}))
    lines = [json.dumps(episode(s)[0]).encode() for s in sessions]
    (run / "traces.jsonl").write_bytes(b"\n".join([*lines[:1], *extra_lines, *lines[1:]]) + b"\n")
    return run / "traces.jsonl"


def test_a_finished_run_reads_as_the_plugin_s_log_does(tmp_path):
    path = write_run(tmp_path, [0, 1, 2], [0, 1, 2])
    assert list(find_logs([tmp_path])) == [path]
    log = read_log(path)
    assert log.problems == [] and log.forged == [] and status_of(log) == "finished"
    assert log.eval_name == "econarena.beauty_L.dev.v0" and log.spec["run_config"]["completion_fns"] == [MODEL + SUFFIX]
    assert [s["session"] for s in log.sessions] == [0, 1, 2]
    for s in log.sessions:
        expected = episode(s["session"])[1]
        assert all(math.isclose(s[m], expected[m]) for m in METRICS)
    assert math.isclose(log.final_report["eas"], sum(s["eas"] for s in log.sessions) / 3)
    assert log.calls == 3 * 10 * 5  # a sampling row per seat call


def test_a_missing_session_leaves_the_run_partial_and_is_named(tmp_path, capsys):
    path = write_run(tmp_path, [0, 2], [0, 1, 2])
    log = read_log(path)
    assert log.final_report is None and status_of(log) == "partial"
    assert any("1 session(s) with no finished episode: [1]" in p for p in log.problems), log.problems
    # the summary counts it against the sessions the run selected and tells vf-eval's own resume (what it
    # pays again said), never the plugin's resume_from, which vf-eval does not take
    summary_main([str(tmp_path)])
    out = capsys.readouterr().out
    assert "partial: 2 of 3 session(s) finished" in out, out
    assert f"vf-eval @ {path.parent / 'configs' / 'resolved' / 'eval.json'} --resume" in out, out
    assert "resume_from" not in out and "sends only the others" not in out and "answered seat calls sent and paid" in out


def test_bad_lines_are_named_and_the_rest_is_read(tmp_path):
    long_line = b'{"x": "' + b"a" * (MAX_LINE_BYTES + 10) + b'"}'
    bad = (b"{not json", b"[1, 2]", long_line, json.dumps({"env": {}, "traces": "no"}).encode(),
           json.dumps({"env": {}, "ok": False, "errors": [{"message": "boom"}],
                       "task": {"data": {"name": "beauty_L/7"}}, "traces": []}).encode())
    log = read_log(write_run(tmp_path, [0, 1], [0, 1], bad))
    assert [s["session"] for s in log.sessions] == [0, 1]
    said = "\n".join(log.problems)
    for expected in ("line 2: not JSON", "line 3: not a JSON object", "line 4: longer than 16 MiB",
                     "line 5: an episode with no EconArena session", "line 6: episode beauty_L/7 errored: boom"):
        assert expected in said, said
    assert log.final_report is None  # an errored episode: the run did not finish cleanly


def test_a_forged_figure_is_named(tmp_path):
    path = write_run(tmp_path, [0], [0])
    line = json.loads(path.read_text())
    first = next(t for t in line["traces"] if t["info"][INFO_KEY]["seat"] == 1)
    first["info"][INFO_KEY]["econarena_session"]["eas"] = 0.99
    path.write_text(json.dumps(line) + "\n")
    log = read_log(path)
    assert log.forged and "session 0" in log.forged[0]


def test_a_traces_file_of_another_environment_is_refused(tmp_path):
    (tmp_path / "traces.jsonl").write_text(json.dumps({"env": {"id": "gsm8k"}, "ok": True, "traces": [
        {"info": {}, "agent": {"config": {"model": "m"}}}]}) + "\n")
    log = read_log(tmp_path / "traces.jsonl")
    assert not log.spec and any("no EconArena session in a verifiers run" in p for p in log.problems)
