"""``econarena-run``: a whole eval set for one fn into a folder the user names, through the real oaieval."""
from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from econarena_evals.calls.concurrency import OPEN_WIDE

from conftest import TEST_REGISTRY, base_env, cli, run_cli
from openai_server import Faults, OpenAIServer
from policies import scripted

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

SET = ["econarena.beauty_L", "econarena.beauty_M", "econarena.beauty_H", "econarena.beauty_hist",
       "econarena.auction_L"]
# The first test runs the whole `econarena` set, as users do; the others test what econarena-run does
# between evals (errors, refusals, stops, resumes), for which two evals of a set of two are enough.
TWO = ["econarena-two", "--registry_path", str(TEST_REGISTRY)]
TWO_SET = ["econarena.beauty_L", "econarena.auction_L"]


def folder_of(out: Path, fn: str) -> Path:
    """The one folder of ``fn``'s condition under --out (``<fn>-<hash of the condition>``)."""
    found = [p for p in out.glob(fn.replace("/", "_") + "-*") if p.is_dir()]
    assert len(found) == 1, found
    assert json.loads((found[0] / "condition.json").read_text())["fn"] == fn
    return found[0]


def final_report(path: Path) -> dict:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return next(r["final_report"] for r in rows if "final_report" in r)


def test_a_set_goes_to_its_own_folder_and_a_second_run_keeps_every_log(tmp_path):
    out = tmp_path / "gpt-x run"
    proc = run_cli([cli("econarena-run"), "econarena/nash", "econarena", "--out", str(out), "--max_samples", "2",
                    "--price-in", "2.5", "--price-out", "10"], base_env())
    assert "tokens used" in proc.stdout  # the prices went to the summary, not to oaieval
    logs = sorted(folder_of(out, "econarena/nash").glob("*.jsonl"))
    assert [p.stem for p in logs] == sorted(SET)
    assert all(final_report(p)["sessions"] == 2 for p in logs)
    table = [line for line in proc.stdout.splitlines() if line.startswith("econarena/nash ")]
    assert len(table) == 5 and all(line.rstrip().endswith("finished") for line in table)
    before = {p: p.stat().st_mtime_ns for p in logs}
    again = run_cli([cli("econarena-run"), "econarena/nash", "econarena", "--out", str(out), "--max_samples", "2"],
                    base_env())
    assert {p: p.stat().st_mtime_ns for p in logs} == before  # a paid log is never written over
    assert again.stderr.count(": kept ") == 5 and "oaieval econarena/nash" not in again.stderr


def test_the_closing_lines_say_what_this_run_did_apart_from_the_folders_total(tmp_path):
    """A second condition into the same --out: its closing line counts its own seat calls (2 evals
    x 2 sessions x 5 seats x 10 runs), not the folder's (which holds the first run's 100 too)."""
    run_cli([cli("econarena-run"), "econarena/nash", *TWO, "--out", str(tmp_path), "--max_samples", "1"], base_env())
    proc = run_cli([cli("econarena-run"), "econarena/nash", *TWO, "--out", str(tmp_path), "--max_samples", "2"],
                   base_env())
    said = [line for line in proc.stderr.splitlines() if line.startswith("econarena-run: this run:")]
    assert said == [f"econarena-run: this run: 2 eval(s) played (200 seat calls answered); the table below counts "
                    f"every log in {tmp_path}, earlier runs' and other conditions' included"], proc.stderr[-2000:]
    table = [line for line in proc.stdout.splitlines() if line.startswith("econarena/nash ")]
    assert len(table) == 4, proc.stdout  # both conditions' rows: the folder's total, told apart
    again = run_cli([cli("econarena-run"), "econarena/nash", *TWO, "--out", str(tmp_path), "--max_samples", "2"],
                    base_env())
    assert ("econarena-run: this run: 0 eval(s) played (0 seat calls answered), 2 kept as finished before;"
            in again.stderr)


def test_errored_sessions_go_on_to_the_next_eval_and_exit_3(tmp_path):
    """Half the requests fail with a 500 and none is tried again: sessions error, the endpoint answers
    the rest, so the set goes on to its next eval."""
    server = OpenAIServer(scripted, models=("m",), faults=Faults(http_500=0.5, seed=1)).start()
    try:
        env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
        proc = run_cli([cli("econarena-run"), "econarena/chat:m", *TWO, "--out", str(tmp_path),
                        "--max_samples", "1", "--extra_eval_params", "max_attempts=1"], env, returncode=3)
    finally:
        server.stop()
    logs = sorted(folder_of(tmp_path, "econarena/chat:m").glob("*.jsonl"))
    assert [p.stem for p in logs] == sorted(TWO_SET)
    assert all(final_report(p)["errored_sessions"] == 1 for p in logs)
    assert proc.stderr.count("econarena-run: [") == 2 and "the set stopped there" not in proc.stderr


def test_a_dead_endpoint_stops_the_set_after_its_first_eval_and_exit_3(tmp_path):
    """Nothing listens: the first eval errors every session with the endpoint presumed down, and the
    evals after it, which would wait out the same dead endpoint, are not started."""
    env = base_env() | {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-test"}  # nothing listens
    proc = run_cli([cli("econarena-run"), "econarena/chat:gpt-4o", *TWO, "--out", str(tmp_path),
                    "--max_samples", "1", "--extra_eval_params", "call_timeout_s=3"], env, returncode=3)
    logs = sorted(folder_of(tmp_path, "econarena/chat:gpt-4o").glob("*.jsonl"))
    assert [p.stem for p in logs] == [TWO_SET[0]] and final_report(logs[0])["errored_sessions"] == 1
    assert proc.stderr.count("econarena-run: [") == 1, proc.stderr[-2000:]
    assert "the set stopped there: the 1 eval(s) after it would have failed the same way" in proc.stderr


def test_a_dead_endpoint_closes_with_one_line_whose_command_as_typed_runs_every_eval_again(tmp_path):
    """Every eval errors against a port nothing listens on: the summary prints no resume command per
    eval, and the run closes with one line (fix the endpoint, then the same command again) whose
    command carries the environment as it must be typed, never the key. Typed into a shell once the
    server is up on that port, it runs both evals to the end in the same folder."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    env = base_env() | {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-test-secret"}
    args = ["econarena/chat:m", *TWO, "--out", str(tmp_path / "runs"), "--max_samples", "1",
            "--extra_eval_params", "call_timeout_s=3"]
    proc = run_cli([cli("econarena-run"), *args], env, cwd=tmp_path, returncode=3)
    assert proc.stdout.count("!! ") == 1 and "To resume it" not in proc.stdout, proc.stdout[-3000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("econarena-run: 1 eval(s) errored")]
    assert len(lines) == 1 and proc.stderr.rstrip().endswith(lines[0]), proc.stderr[-3000:]
    assert "the endpoint is not answering: fix it first" in lines[0] and "sk-test-secret" not in proc.stderr
    command = lines[0].split("plays every eval not finished: ", 1)[1]
    assert command.startswith(f"OPENAI_BASE_URL={url} PYTHONPATH=") and "OPENAI_API_KEY" not in command
    assert command.split(" econarena-run ", 1)[1] == shlex.join(args)
    # the summary on its own names each log's resume, the endpoint written as the command's prefix, not in words
    alone = run_cli([cli("econarena-summary"), str(tmp_path / "runs")], base_env(), cwd=tmp_path)
    hints = [line.strip() for line in alone.stdout.splitlines() if "resume_from=" in line]
    assert len(hints) == 1 and all(h.startswith(f"OPENAI_BASE_URL={url} ") for h in hints), alone.stdout[-2000:]
    assert "environment the run had" not in alone.stdout
    server = OpenAIServer(scripted, models=("m",)).start(port)
    try:
        typed = {k: v for k, v in env.items() if k not in ("OPENAI_BASE_URL", "PYTHONPATH")}  # the line sets them
        again = run_cli(["bash", "-c", command], typed, cwd=tmp_path)
        folder = folder_of(tmp_path / "runs", "econarena/chat:m")
        logs = sorted(folder.glob("*.jsonl"))
        assert [p.stem for p in logs] == sorted(TWO_SET), again.stderr[-2000:]
        assert all(final_report(p)["sessions"] == 1 and final_report(p)["errored_sessions"] == 0 for p in logs)
        assert server.answered() == 2 * 50 and "errored or stopped" not in again.stderr
    finally:
        server.stop()


def test_a_refused_run_stops_the_set(tmp_path):
    """A typo is refused: the set stops, says to correct the command (not to run the same one again),
    and leaves no folder behind."""
    out = tmp_path / "out"
    proc = run_cli([cli("econarena-run"), "econarena/nash", "econarena", "--out", str(out),
                    "--extra_eval_params", "seats=1"], base_env(), returncode=2)
    assert proc.stderr.count("econarena-run: [") == 1 and "the set stops here" in proc.stderr
    assert "correct the command" in proc.stderr and "same command again" not in proc.stderr
    assert not out.exists()


def test_a_wrong_set_name_or_a_record_path_is_one_line_and_exit_2(tmp_path):
    for args in (["econarena/nash", "econarena-ful", "--out", str(tmp_path)],
                 ["econarena/nash", "econarena", "--out", str(tmp_path), "--record_path", "x.jsonl"]):
        proc = subprocess.run([cli("econarena-run"), *args], env=base_env(), capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_refused_run_leaves_nothing_kept_and_the_corrected_command_runs_it(tmp_path):
    args = [cli("econarena-run"), "econarena/nash", *TWO, "--out", str(tmp_path), "--max_samples", "2"]
    run_cli(args + ["--extra_eval_params", "temprature=0"], base_env(), returncode=2)
    again = run_cli(args, base_env())
    logs = sorted(folder_of(tmp_path, "econarena/nash").glob("*.jsonl"))
    assert [p.stem for p in logs] == sorted(TWO_SET) and ": kept " not in again.stderr
    assert all(final_report(p)["sessions"] == 2 for p in logs)


def test_sigterm_stops_the_set_and_its_oaieval_and_the_same_command_resumes_paying_nothing_twice(tmp_path):
    server = OpenAIServer(scripted, models=("m",), slots=1, decode_s=0.05).start()
    try:
        env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
        args = [cli("econarena-run"), "econarena/chat:m", *TWO, "--out", str(tmp_path), "--max_samples", "1"]
        proc = subprocess.Popen(args, env=env, stderr=subprocess.PIPE, text=True)
        while server.answered() < 10:  # a fifth of the way into the first cell (50 calls, one at a time)
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 143, err[-3000:]
        answered_first, sent = server.answered(), len(server.requests)
        time.sleep(2)
        assert len(server.requests) == sent  # its oaieval ended with it: nothing is left sending
        again = run_cli(args, env)
        assert "resuming from it" in again.stderr
        folder = folder_of(tmp_path, "econarena/chat:m")
        assert final_report(folder / "econarena.beauty_L.resumed.jsonl")["sessions"] == 1
        assert server.answered() == 2 * 50  # two cells of one session, 50 seat calls each: none paid twice
        assert answered_first > 0
    finally:
        server.stop()


def test_an_oaieval_killed_by_a_signal_stops_the_set_and_the_same_command_resumes_it(tmp_path):
    """kill -9 (or the out-of-memory killer) leaves no stop in the log and no exit status of its own:
    the set stops there as for any signal, instead of going on with the next eval."""
    server = OpenAIServer(scripted, models=("m",), slots=1, decode_s=0.05).start()
    try:
        env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
        args = [cli("econarena-run"), "econarena/chat:m", *TWO, "--out", str(tmp_path), "--max_samples", "1"]
        proc = subprocess.Popen(args, env=env, stderr=subprocess.PIPE, text=True)
        while server.answered() < 10:
            time.sleep(0.05)
        child = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        assert len(child) == 1
        os.kill(int(child[0]), signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 137, err[-3000:]
        assert "oaieval was killed by signal 9: the set stops here" in err
        folder = folder_of(tmp_path, "econarena/chat:m")
        assert sorted(p.name for p in folder.iterdir()) == ["condition.json", "econarena.beauty_L.jsonl"]  # the next eval never began
        again = run_cli(args, env)
        assert "resuming from it" in again.stderr
        # at most the calls the kill caught in flight (a lane holds up to OPEN_WIDE) are paid twice
        assert 2 * 50 <= server.answered() <= 2 * 50 + OPEN_WIDE
    finally:
        server.stop()
