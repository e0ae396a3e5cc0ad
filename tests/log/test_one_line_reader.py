"""One bounded line reader (``log.jsonl.bounded_lines``) reads every JSON-lines file of the package:
evals logs, a verifiers run's traces, the verifiers front end's journal of answered calls."""
from __future__ import annotations

import ast
import io

from econarena_evals.log import jsonl
from econarena_evals.log.evallog import read_log
from econarena_evals.log.jsonl import MAX_DEPTH, NOT_AN_EVALS_LOG, Reading, bounded_lines, json_rows, text_lines

from conftest import ROOT


def test_no_module_but_the_reader_reads_lines_itself():
    reading_lines = []
    for path in sorted((ROOT / "econarena_evals").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "readline":
                reading_lines.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert reading_lines and all(where.startswith("econarena_evals/log/jsonl.py:") for where in reading_lines), \
        reading_lines


def test_a_line_past_the_bound_is_named_and_skipped_and_the_next_lines_keep_their_numbers(monkeypatch):
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 200)
    data = b'{"a": 1}\n' + b"x" * 300 + b"\n\n[1]\nnot json\n" + b"[" * 70 + b"]" * 70 + b'\n{"b": 2}'
    reading = Reading()
    rows = list(json_rows(text_lines(io.BytesIO(data), reading), reading, "run"))
    assert rows == [(1, {"a": 1}), (7, {"b": 2})]
    assert reading.problems == ["line 2: longer than 0 MiB, skipped", "line 4: not a JSON object, skipped",
                                "line 5: not JSON (truncated run?)", "line 6: nested deeper than 64 levels, skipped"]
    assert reading.not_json == 2
    assert reading.size == len(data) and reading.offset == data.rindex(b"\n") + 1


def test_a_reader_that_stops_at_a_line_past_the_bound_reads_no_more_of_it(monkeypatch):
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 16)
    reading = Reading()
    lines = bounded_lines(io.BytesIO(b"y" * 10_000 + b"\n{}\n"), reading)
    assert next(lines) == (1, None)
    lines.close()
    assert reading.size == 17  # the bound and one byte, not the line


def test_a_first_line_nested_too_deep_is_named_as_that_not_as_no_json(tmp_path):
    """A file whose first line is JSON 5,000 levels deep is no log: refused, and said to be too deep
    (it is JSON), where a line that is no JSON at all is said to be that."""
    deep, garbage = tmp_path / "deep.jsonl", tmp_path / "garbage.jsonl"
    deep.write_text("[" * 5000 + "]" * 5000 + "\n")
    garbage.write_text("not json\n")
    too_deep, not_json = read_log(deep), read_log(garbage)
    assert too_deep.problems == [f"line 1 is JSON nested deeper than {MAX_DEPTH} levels: {NOT_AN_EVALS_LOG}"]
    assert not_json.problems == [f"line 1 is not JSON: {NOT_AN_EVALS_LOG}"]
    assert not too_deep.garbled and not_json.garbled  # --strict's "first line is not JSON" counts only the second
