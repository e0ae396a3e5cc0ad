"""One bad file never hangs the report tools, nor changes another file's figures.

Each case runs the real CLI on a folder of real logs (the fixture logs) plus one bad file, under a
subprocess timeout (a regression fails, never hangs), with the default ``--workers`` (one process
per core, so the worker processes are what is tested): the tool ends, names the bad file, and every
other row of its table is the row a run without the bad file prints."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from report_logs import OLDLOGS, chat_player, rows_of, write

from econarena_evals.log.evallog import read_log
from econarena_evals.log.format import PLAYERS_EVENT, RUN_EVENT
from econarena_evals.log.jsonl import MAX_DEPTH
from econarena_evals.report.workers import default_workers

from conftest import base_env, cli

pytestmark = pytest.mark.e2e  # every test here starts the tools

HANG_GUARD = 60  # seconds: past this a tool is hung (the fixture folder reads in a few seconds)


def summary(*args: str, returncode: int = 0) -> subprocess.CompletedProcess:
    proc = subprocess.run([cli("econarena-summary"), *args], env=base_env(), capture_output=True, text=True,
                          timeout=HANG_GUARD)
    assert proc.returncode == returncode, proc.stdout + proc.stderr[-3000:]
    return proc


def table_rows(stdout: str) -> list[list[str]]:
    """The summary table's rows (under its header and rule), each as its cells (the widths are the table's)."""
    return [re.split(r"\s{2,}", line.strip()) for line in stdout.split("\n\n")[0].splitlines()[2:]]


@pytest.fixture
def good(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    shutil.copytree(OLDLOGS, folder)
    return folder


def test_a_line_nested_1000_deep_is_a_bad_line_of_its_log_and_no_worker_dies(good, tmp_path):
    """orjson reads 1,000 levels and json does not; a row that deep could not be sent back from a worker.
    Now both refuse it as deeper than MAX_DEPTH: the line is named and skipped, the log's session whose
    run it was is counted errored, and the tool's output is the same with workers and without."""
    assert default_workers() > 1  # the default --workers is a pool of processes here
    without = summary(str(good))
    bad = chat_player(good / "deep" / "chat.jsonl", {"temperature": 0.5})
    rows = rows_of(bad)
    run = next(i for i, r in enumerate(rows) if r.get("type") == RUN_EVENT)
    rows[run]["data"]["extra"] = "DEEP"  # a value 1,000 lists deep (written as text: json.dumps would recurse)
    lines = [json.dumps(r) for r in rows]
    lines[run] = lines[run].replace('"DEEP"', "[" * 1000 + "]" * 1000)
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pooled = summary(str(good))
    alone = summary(str(good), "--workers", "1")
    assert pooled.stdout == alone.stdout and pooled.returncode == alone.returncode == 0
    assert str(bad) in pooled.stdout and "not all in the log" in pooled.stdout
    other = [r for r in table_rows(pooled.stdout) if "8765" not in r[0]]
    assert other == table_rows(without.stdout)
    assert len(table_rows(pooled.stdout)) == len(other) + 1  # the deep log's player: its other sessions
    strict = summary(str(good), "--strict", returncode=1)
    assert str(bad) in strict.stdout
    assert f"line {run + 1}: nested deeper than {MAX_DEPTH} levels, skipped" in read_log(bad).problems


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def _holds(pid: int, path: Path) -> bool:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == str(path):
                return True
        except OSError:
            continue
    return False


def _kill_the_worker_reading(tool: subprocess.Popen, path: Path) -> int:
    """SIGKILL the tool's worker process that has ``path`` open, found in /proc: each child is stopped
    (SIGSTOP) while it is looked at, so the one killed is reading ``path`` when it dies."""
    seen = 0
    while tool.poll() is None:
        for child in _children(tool.pid):
            seen += 1
            os.kill(child, signal.SIGSTOP)
            if _holds(child, path):
                os.kill(child, signal.SIGKILL)
                return child
            os.kill(child, signal.SIGCONT)
        time.sleep(0.002)  # a hang guard's poll, not a timed assertion
    raise AssertionError(f"the tool ended before a worker was seen reading {path} ({seen} looks)")


def _big_log(good: Path) -> Path:
    """A valid log of another player, padded with evals' own "match" events (which the tools pass over)
    so that reading it takes a while."""
    big = chat_player(good / "big" / "chat.jsonl", {"temperature": 0.5})
    rows = rows_of(big)
    run_id = rows[0]["spec"]["run_id"]
    padding = [{"run_id": run_id, "event_id": 100_000 + i, "sample_id": "econarena.beauty_L.0", "type": "match",
                "data": {"correct": True}} for i in range(200_000)]
    return write(big, [rows[0], *padding, *rows[1:]])


def _killing(args: list[str], big: Path) -> subprocess.CompletedProcess:
    """Run a tool, SIGKILL its worker that reads ``big``, and wait (bounded) for the tool to end."""
    tool = subprocess.Popen(args, env=base_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        killed = _kill_the_worker_reading(tool, big)
        stdout, stderr = tool.communicate(timeout=HANG_GUARD)
    finally:
        if tool.poll() is None:
            tool.kill()
            tool.communicate()
    assert killed != tool.pid
    return subprocess.CompletedProcess(args, tool.returncode, stdout, stderr)


DIED = "unread: the worker process reading it died (killed by SIGKILL): none of it is used"


def test_a_worker_killed_while_it_reads_a_log_fails_that_log_alone(good, tmp_path):
    """As the OOM killer does: a worker killed with SIGKILL while it reads one log. The tool ends, names
    that log (its rows left out) and prints every other row as a run without that log does."""
    assert default_workers() > 1
    without = summary(str(good))
    big = _big_log(good)
    proc = _killing([cli("econarena-summary"), str(good)], big)
    assert proc.returncode == 0, proc.stderr[-3000:]
    named = [line for line in proc.stdout.splitlines() if str(big) in line]
    assert len(named) == 1 and "died (killed by SIGKILL)" in named[0] and "none of it is used" in named[0]
    assert f"{big}: {DIED}" in proc.stderr
    assert table_rows(proc.stdout) == table_rows(without.stdout)
    strict = _killing([cli("econarena-summary"), str(good), "--strict"], big)
    assert strict.returncode == 1 and "1 log(s) not read" in strict.stderr
    assert table_rows(strict.stdout) == table_rows(without.stdout)


def test_a_worker_killed_while_it_reads_a_log_leaves_the_report_of_the_others(good, tmp_path):
    def report(out: Path) -> list[str]:
        return [cli("econarena-report"), str(good), "--out", str(out), "--transcripts", "0"]

    without = subprocess.run(report(tmp_path / "without"), env=base_env(), capture_output=True, text=True,
                             timeout=HANG_GUARD * 3)
    assert without.returncode == 0, without.stderr[-3000:]
    big = _big_log(good)
    proc = _killing(report(tmp_path / "with"), big)
    assert proc.returncode == 0 and f"{big}: {DIED}" in proc.stderr, proc.stderr[-3000:]
    before, after = (json.loads((tmp_path / name / "report.json").read_text()) for name in ("without", "with"))
    assert after["conditions"] == before["conditions"] and after["leaderboard"] == before["leaderboard"]
    assert [n["status"] for n in after["inputs"] if n["file"] == str(big)] == ["unread"]


@pytest.mark.parametrize("stated", [3, "2", True, None])
def test_a_log_of_a_format_this_version_does_not_read_is_named_left_out_and_fails_strict(good, stated):
    without = summary(str(good))
    bad = chat_player(good / "future" / "chat.jsonl", {"temperature": 0.5})
    rows = rows_of(bad)
    players = next(r for r in rows if r.get("type") == PLAYERS_EVENT)
    players["data"]["format"] = stated
    write(bad, rows)
    said = f"the log states format {json.dumps(stated)}, which this version does not read"
    proc = summary(str(good))
    assert table_rows(proc.stdout) == table_rows(without.stdout)
    assert any(str(bad) in line and said in line for line in proc.stdout.splitlines())
    strict = summary(str(good), "--strict", returncode=1)
    assert table_rows(strict.stdout) == table_rows(without.stdout) and "1 log(s) not read" in strict.stderr
    if stated == 3:  # econarena-report names it too, and reports the rest
        report = subprocess.run([cli("econarena-report"), str(good), "--out", str(good.parent / "report")],
                                env=base_env(), capture_output=True, text=True, timeout=HANG_GUARD * 3)
        assert report.returncode == 0 and f"{bad}: unread: line 2: {said}" in report.stderr, report.stderr[-3000:]
