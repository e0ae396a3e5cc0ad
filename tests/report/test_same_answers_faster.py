"""The report tools' faster paths give the answers of the plain ones: orjson's rows are json's, a run
event's numbers are checked as before, each log's browser part assembles to the JSON ``log_data``
gives, and the worker processes answer as this process does. (Their speed is bench/report_scale.py's.)"""
from __future__ import annotations

import json
import math
import shutil
from functools import partial
from pathlib import Path

import pytest

from econarena_evals.log import jsonl
from econarena_evals.log.evallog import read_log, run_event_problem
from econarena_evals.log.transcripts import read_calls, transcript_sessions
from econarena_evals.report import html as report_html
from econarena_evals.report.analysis import diagnostics
from econarena_evals.report.prepare import cached_diagnostics, read_for_report
from econarena_evals.report.selection import select
from econarena_evals.report.workers import Workers

from conftest import ROOT

OLD_LOGS = ROOT / "tests" / "fixtures" / "old_logs" / "9b70382"


def _same(a, b) -> bool:
    """Equal to the type and, for floats, to the bit (json and orjson both give dicts in file order)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return a.hex() == b.hex() if not math.isnan(a) else math.isnan(b)
    return a == b


@pytest.mark.parametrize("text", [
    '{"x": 18446744073709551616, "y": -9223372036854775809}',  # past 64 bits: orjson would give floats
    '{"x": 9223372036854775807, "y": 5790624381138623, "z": 1.0, "w": -0.0}',
    '{"x": "\\ud800 lone", "y": "\\udfff"}',  # json reads lone surrogates, orjson refuses them
    '{"x": NaN, "y": Infinity, "z": 1e400}',  # orjson refuses these; json reads them
    '{"a": 1, "b": 2, "a": 3}',
    '{"f": [0.1, 2.5e-308, 5e-324, 1.7976931348623157e308, 123456789.123456789]}',
])
def test_a_row_is_what_json_reads(text):
    expected = json.loads(text)
    if "\\ud" in text:
        expected = jsonl._escape_surrogates(expected)
    assert _same(jsonl.decode_row(text), expected)


@pytest.mark.parametrize("text", ["{\"x\": 1,}", "{\"x\": \"a\tb\"}", "NaN x"])
def test_what_json_refuses_is_refused(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        jsonl.decode_row(text)


def _nested(depth: int) -> str:
    return '{"a": ' * (depth - 1) + "[]" + "}" * (depth - 1)


# Lines both readings must judge alike: numbers orjson refuses or reads otherwise, surrogates, depth at the
# bound and past it (past orjson's 1,024 and past what this Python's json reads), and lines that are no JSON.
LINES = [
    '{"x": NaN, "y": Infinity, "z": -Infinity, "w": 1e400}',
    '{"x": 18446744073709551616, "y": -9223372036854775809, "z": 9223372036854775807}',
    '{"x": ' + "7" * 4300 + "}", '{"x": ' + "7" * 4301 + "}", '{"x": 1' + "0" * 400 + ".5}",
    '{"f": [0.1, 2.5e-308, 5e-324, 1.7976931348623157e308, -0.0]}',
    '{"x": "\\ud800 lone"}', '{"a": 1, "a": 2}',
    _nested(jsonl.MAX_DEPTH), _nested(jsonl.MAX_DEPTH + 1), "[" * 64 + "]" * 64, "[" * 65 + "]" * 65,
    '{"s": "' + "[" * 500 + '"}', _nested(1000), _nested(1100), "[" * 5000 + "]" * 5000,
    "{\"x\": 1,}", "NaN", "",
]


def _depth(x) -> int:
    return 1 + max((_depth(v) for v in (x.values() if isinstance(x, dict) else x)), default=0) \
        if isinstance(x, (dict, list)) else 0


@pytest.mark.parametrize("text", LINES, ids=range(len(LINES)))
def test_a_line_reads_the_same_with_orjson_and_without(text):
    """The orjson reading (``decode_row``, orjson being installed) and json's (``_json_row``, the reading
    without orjson) give the same verdict on every line, and the same row to the bit; a line nested
    deeper than ``MAX_DEPTH`` is refused by both, one at the bound read by both."""
    assert jsonl._fast_loads is not None  # orjson is a dependency: decode_row takes its path first
    verdicts = []
    for read in (jsonl.decode_row, jsonl._json_row):
        try:
            verdicts.append(read(text))
        except ValueError as exc:
            verdicts.append(type(exc))
    fast, plain = verdicts
    assert (fast is jsonl.TooDeep) == (plain is jsonl.TooDeep)
    if isinstance(fast, type) or isinstance(plain, type):
        assert isinstance(fast, type) and isinstance(plain, type), (fast, plain)
    else:
        assert _same(fast, plain) and _depth(fast) <= jsonl.MAX_DEPTH
    deep = text.startswith(("[" * 65, '{"a": ' * 64))
    assert (fast is jsonl.TooDeep) is deep


def test_every_line_of_the_old_logs_reads_as_json_reads_it():
    lines = [line for path in sorted(OLD_LOGS.glob("*.jsonl"))
             for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(lines) > 100
    assert all(_same(jsonl.decode_row(line), json.loads(line)) for line in lines)


def _run_event(**extra):
    log = read_log(next(OLD_LOGS.glob("*beauty_L.jsonl")))
    return {**json.loads(json.dumps(log.runs[0])), **extra}


@pytest.mark.parametrize("field, value, refused", [
    ("extra", 1e15, False), ("extra", -1e15, False), ("extra", 1e15 + 1, True), ("extra", math.nan, True),
    ("extra", math.inf, True), ("extra", [1.0, 2e16], True), ("extra", [1.0, [2e16]], False),  # one level down only
    ("extra", True, False), ("extra", 10**400, True), ("extra", "2e16", False),
])
def test_a_run_events_numbers_are_bounded_as_before(field, value, refused):
    why = run_event_problem(_run_event(**{field: value}))
    assert (why is not None) is refused, why
    if refused:
        assert "not finite or past" in why


def test_each_logs_browser_part_assembles_to_log_datas_json():
    chosen, _ = select([OLD_LOGS])
    assert len({c.column for c in chosen}) < len(chosen)  # columns of two logs: their strings are shared
    for limit in (0, 3, None):
        by_column: dict[str, tuple[report_html.Strings, report_html.Strings]] = {}
        for c in chosen:
            keep = transcript_sessions(c.log, limit)
            old_strings, new_strings = by_column.setdefault(c.column, (report_html.Strings(), report_html.Strings()))
            expected = report_html.json_for_script(
                report_html.log_data(c, read_calls(c.log, c.players, keep), keep, old_strings))
            piece = report_html.log_piece(c.log, limit)
            assert report_html.piece_text(c.column, c.finished, piece, new_strings) == expected
            assert new_strings.items == old_strings.items


def test_the_readers_diagnostics_are_the_reports():
    path = next(OLD_LOGS.glob("*random*beauty_L.jsonl"))
    prepared, plain = read_for_report(path, 3), read_log(path)
    player = plain.players[0]
    assert prepared.derived["diagnostics"][player] == diagnostics(plain, player) != {}
    assert cached_diagnostics(prepared, player) == diagnostics(plain, player)
    assert cached_diagnostics(plain, player) == diagnostics(plain, player)  # nothing worked out: computed here


@pytest.mark.e2e
def test_worker_processes_answer_as_this_process_does(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(OLD_LOGS, logs)
    reader = partial(read_for_report, transcripts=2)
    here, _ = select([logs], reader=reader)
    with Workers(2) as workers:
        assert workers.n == min(2, Workers(None).n)
        there, _ = select([logs], workers=workers, reader=reader)
        squares = [workers.submit(pow, i, 2) for i in range(5)]
        assert [s.get() for s in squares] == [0, 1, 4, 9, 16]
    assert [c.log.path for c in there] == [c.log.path for c in here]
    for a, b in zip(here, there):
        assert (a.column, a.log.runs, a.log.sessions, a.log.final_report) == (b.column, b.log.runs, b.log.sessions,
                                                                              b.log.final_report)
        assert a.log.derived["diagnostics"] == b.log.derived["diagnostics"]
        assert a.log.derived["browser"].body == b.log.derived["browser"].body
    assert Path(here[0].log.path).exists()
