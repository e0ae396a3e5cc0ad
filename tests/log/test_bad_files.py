"""Files that are not evals logs, and hand-edited logs, given to the report tools.

A file whose first line is not a run spec is refused at that line, whatever its size; a line past
``MAX_LINE_BYTES`` is named and skipped without being held; a hand-edited log never crashes
``econarena-summary`` or ``econarena-report``: a seeded mutator breaks a real small log in the ways
hand edits do and both tools' code runs on each mutant in-process. Bounds are on bytes read, not
time (bench/bad_files.py prints the times and memory for the 1 GB cases).
"""
from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from econarena_evals.log import jsonl as logs
from econarena_evals.log.evallog import read_log
from econarena_evals.log.jsonl import MAX_LINE_BYTES, Reading, iter_rows
from econarena_evals.report import build as report
from econarena_evals.report import summary
from econarena_evals.run.resume import ResumeRefused, read_rows

from conftest import ROOT, base_env, cli, run_cli

REGISTRY = ROOT / "registry"


@pytest.fixture(scope="module")
def small_log(tmp_path_factory) -> Path:
    """A real log: 3 sessions of econarena/random on beauty_L, written by oaieval."""
    path = tmp_path_factory.mktemp("small") / "small.jsonl"
    run_cli([cli("oaieval"), "econarena/random", "econarena.beauty_L", "--registry_path", str(REGISTRY),
             "--max_samples", "3", "--record_path", str(path)], base_env())
    return path


class CountingFile(io.RawIOBase):
    """A file of ``size`` bytes of ``fill`` that counts what was read from it."""

    def __init__(self, size: int, fill: bytes) -> None:
        self.size, self.fill, self.pos, self.read_bytes = size, fill, 0, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.size - self.pos)
        buffer[:n] = (self.fill * (n // len(self.fill) + 1))[:n]
        self.pos += n
        self.read_bytes += n
        return n


@pytest.mark.parametrize("fill", [b"\0", b"garbage without newline ", b"\xff\xfe not utf-8\n"])
def test_a_huge_file_that_is_not_a_log_is_refused_after_its_first_line(monkeypatch, fill):
    raw = CountingFile(2**30, fill)
    monkeypatch.setattr(logs, "open_regular", lambda path, reading: io.BufferedReader(raw))
    reading = Reading()
    assert list(iter_rows(Path("huge.jsonl"), reading)) == []
    assert reading.refused and logs.NOT_AN_EVALS_LOG in reading.refused
    # one bounded line and the reader's buffer, never the gigabyte
    assert raw.read_bytes <= MAX_LINE_BYTES + 2**20


@pytest.mark.e2e
def test_a_sparse_gigabyte_file_is_refused_by_both_tools(tmp_path):
    sparse = tmp_path / "sparse.jsonl"
    with open(sparse, "wb") as handle:
        handle.truncate(2**30)  # one "line" of NULs, no newline, no disk used
    for tool, extra in (("econarena-summary", []), ("econarena-report", ["--out", str(tmp_path / "out")])):
        proc = subprocess.run([cli(tool), str(sparse), *extra], env=base_env(), capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 1, proc.stderr
        assert "Traceback" not in proc.stderr
        assert f"{sparse}: skipped: line 1 is longer than 16 MiB, not a run spec: not an evals log" in proc.stderr


@pytest.mark.e2e
def test_an_overlong_line_inside_a_log_is_named_and_skipped(small_log, tmp_path):
    lines = small_log.read_bytes().splitlines(keepends=True)
    path = tmp_path / "long.jsonl"
    path.write_bytes(lines[0] + b'{"x": "' + b"a" * (MAX_LINE_BYTES + 10) + b'"}\n' + b"".join(lines[1:]))
    log = read_log(path)
    assert "line 2: longer than 16 MiB, skipped" in log.problems
    assert len(log.sessions) == 3 and log.final_report is not None


@pytest.mark.e2e
def test_a_lone_surrogate_is_read_as_its_escape(small_log, tmp_path):
    path = tmp_path / "surrogate.jsonl"
    path.write_text(small_log.read_text().replace("econarena/random", "econarena/r\\ud800ndom"))
    log = read_log(path)
    assert log.players == ["econarena/r\\ud800ndom"]  # the 6-character text, as the recorder stores one
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert summary.main([str(path)]) == 0
    assert "econarena/r\\ud800ndom" in out.getvalue()


def _mixed(small_log: Path, tmp_path: Path) -> Path:
    """What two runs on one --record_path left before the lock: the second's rows under the first's."""
    text = small_log.read_text()
    run_id = json.loads(text.splitlines()[0])["spec"]["run_id"]
    other = "\n".join(text.splitlines()[1:]).replace(run_id, "OTHER" + run_id[5:])
    path = tmp_path / "mixed.jsonl"
    path.write_text(text + other + "\n")
    return path


@pytest.mark.e2e
def test_a_log_two_runs_wrote_is_named_and_not_used(small_log, tmp_path):
    path = _mixed(small_log, tmp_path)
    log = read_log(path)
    assert log.mixed and "holds 2 runs" in log.mixed
    assert log.sessions == [] and log.runs == [] and log.final_report is None
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert summary.main([str(path)]) == 1
        assert report.main([str(path), "--out", str(tmp_path / "out")]) == 1
    assert err.getvalue().count(f"{path}: skipped: holds 2 runs") == 2
    with pytest.raises(ResumeRefused, match="holds 2 runs"):
        read_rows(path)


# ---- the mutator: hand edits of a real log ----

ODD = [None, "x", -1, 0, 1.5, 10**30, 1e308, float("nan"), float("inf"), [], {}, True, "\ud800", "a'b\"c",
       "<b>", [None], {"a": 1}]


def _paths(x: Any, here: tuple = ()) -> list[tuple]:
    out = [here]
    if isinstance(x, dict):
        for k, v in x.items():
            out += _paths(v, here + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            out += _paths(v, here + (i,))
    return out


def _set(x: Any, path: tuple, value: Any, delete: bool) -> Any:
    if not path:
        return value
    parent = x
    for key in path[:-1]:
        parent = parent[key]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return x


def mutate(lines: list[str], rng: random.Random) -> str:
    out = list(lines)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(out))
        if '"sampling"' in out[i] and rng.random() < 0.8:  # most edits hit what the tools read
            i = rng.choice([j for j, line in enumerate(out) if '"sampling"' not in line])
        what = rng.random()
        if what < 0.1:
            out[i] = out[i][: rng.randrange(len(out[i]) + 1)]  # a line cut
        elif what < 0.15:
            out.insert(i, rng.choice(["\0" * 100, "[1, 2]", "null", "{" * 5000, "1" * 5000, "\ufffd"]))
        else:
            try:
                row = json.loads(out[i])
            except ValueError:
                continue
            path = rng.choice(_paths(row)[1:] or [()])
            row = _set(copy.deepcopy(row), path, rng.choice(ODD), delete=rng.random() < 0.25)
            # the command line gets an unbalanced quote now and then: what shlex cannot split
            if rng.random() < 0.1 and isinstance(row, dict) and isinstance(row.get("spec"), dict):
                row["spec"].setdefault("run_config", {})["command"] = "oaieval 'unbalanced"
            out[i] = json.dumps(row)
    return "\n".join(out) + "\n"


def _run_tools(path: Path, out: Path, with_report: bool) -> None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert summary.main([str(path)]) in (0, 1)
        if with_report:
            assert report.main([str(path), "--out", str(out), "--transcripts", "all"]) in (0, 1)


@pytest.mark.e2e
def test_hand_edited_logs_never_crash_the_report_tools(small_log, tmp_path):
    lines = small_log.read_text().splitlines()
    rng = random.Random(24)
    for n in range(200):
        text = mutate(lines, rng)
        path = tmp_path / f"mutant{n}.jsonl"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            _run_tools(path, tmp_path / f"out{n}", with_report=n % 8 == 0)
        except Exception as exc:
            raise AssertionError(f"mutant {n} ({path}) crashed a tool: {type(exc).__name__}: {exc}") from exc
        path.unlink()
