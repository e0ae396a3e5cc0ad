"""econarena-summary: the report's selection rules, errored sessions in plain sight, --strict."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from report_logs import chat_player

from econarena_evals.report.summary import PROSE_WIDTH
from econarena_evals.report.tokens import NOTE

from conftest import ERRORED, REGISTRY, TEST_REGISTRY, base_env, cli, dead_endpoint, run_cli


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("summary")
    env = base_env()
    (d / "clean").mkdir()
    (d / "errored").mkdir()
    run_cli([cli("oaieval"), "econarena/nash", "econarena.beauty_L", "--registry_path", str(REGISTRY),
             "--record_path", str(d / "clean/a.jsonl"), "--max_samples", "2"], env)
    run_cli([cli("oaieval"), "econarena/nash", "econarena.beauty_L", "--registry_path", str(REGISTRY),
             "--record_path", str(d / "clean/b.jsonl"), "--max_samples", "2", "--extra_eval_params",
             "temperature=0"], env)
    # every session errors: evals' gpt-4 fn against a dead endpoint
    run_cli([cli("oaieval"), "gpt-4", "econarena.beauty_L", "--registry_path", str(REGISTRY),
             "--record_path", str(d / "errored/c.jsonl"), "--max_samples", "2"], dead_endpoint(env), returncode=ERRORED)
    return d


def summary(*args):
    return subprocess.run([cli("econarena-summary"), *map(str, args)], env=base_env(), capture_output=True,
                          text=True, timeout=120)


@pytest.mark.e2e
def test_conditions_get_their_own_rows_and_strict_passes_a_clean_run(logs):
    proc = summary(logs / "clean", "--strict")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("econarena/nash")]
    assert len(rows) == 2  # two conditions, two rows
    assert sum("beauty_L (temperature=0)" in r for r in rows) == 1
    assert "!!" not in proc.stdout


@pytest.mark.e2e
def test_errored_sessions_are_shown_and_strict_fails(logs):
    loose = summary(logs)
    assert loose.returncode == 0
    assert "!! gpt-4 @ 127.0.0.1:9 in beauty_L" in loose.stdout and "2 errored session(s); first:" in loose.stdout
    strict = summary(logs, "--strict")
    assert strict.returncode == 1 and "1 log(s) with errored or missing sessions" in strict.stderr


@pytest.mark.e2e
def test_strict_fails_on_a_file_that_is_no_json_and_passes_other_json_lines(logs, tmp_path):
    """A .jsonl whose first line is no JSON may be a log damaged where its run spec was: skipped and
    named, and --strict fails; another tool's JSON lines beside the logs are skipped and pass."""
    import shutil
    folder = tmp_path / "mixed"
    shutil.copytree(logs / "clean", folder)
    (folder / "data.jsonl").write_text('{"input": "a sample, not a log"}\n')
    assert summary(folder, "--strict").returncode == 0
    (folder / "damaged.jsonl").write_bytes(b"\x00\x17garbage where a run spec was\n{}\n")
    loose, strict = summary(folder), summary(folder, "--strict")
    named = f"{folder / 'damaged.jsonl'}: skipped: line 1 is not JSON: not an evals log"
    assert loose.returncode == 0 and named in loose.stderr
    assert strict.returncode == 1 and named in strict.stderr
    assert "1 file(s) whose first line is not JSON" in strict.stderr
    # the other logs' rows are there all the same
    assert [r for r in strict.stdout.splitlines() if r.startswith("econarena/nash")] == [
        r for r in loose.stdout.splitlines() if r.startswith("econarena/nash")] and loose.stdout.count("econarena/nash") >= 2


@pytest.mark.e2e
def test_strict_fails_even_when_the_reader_of_its_output_stops_early(logs):
    """`econarena-summary --strict | head -1` in a CI job: the reader closing the pipe must not turn
    the verdict into a pass; without --strict a closed pipe is no failure."""
    for strict, status in ((["--strict"], 1), ([], 0)):
        proc = subprocess.Popen([cli("econarena-summary"), str(logs), *strict], env=base_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.readline()
        proc.stdout.close()  # as `head -1` does once it has its line
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == status, err.decode()
        assert b"Traceback" not in err


@pytest.mark.e2e
def test_the_table_has_intervals_and_a_legend_with_the_floors(logs):
    proc = summary(logs / "clean")
    lines = proc.stdout.splitlines()
    row = next(line for line in lines if line.startswith("econarena/nash") and "temperature" not in line)
    assert row.count("[") == 6 and "0.840 [0.840, 0.840]" in row and "0.200 [0.200, 0.200]" in row
    start = next(i for i, line in enumerate(lines) if line.startswith("mean [95 % bootstrap interval over sessions]"))
    end = next(i for i, line in enumerate(lines) if line.endswith("econarena-report)."))
    legend = " ".join(lines[start:end + 1])  # wrapped: a terminal shows each line whole
    assert all(len(line) <= PROSE_WIDTH for line in lines[start:end + 1]) and end > start, proc.stdout
    assert "win_rate is 1/seats (0.200) by construction" in legend
    assert "every answer a rule break (the zero point, no credit up to it) 0.000" in legend
    assert "Nash play 0.840" in legend


@pytest.mark.e2e
def test_the_summary_shows_the_reports_intervals(tmp_path):
    """Each interval is seeded by what it is of, so the terminal and report.json agree to the digit."""
    import json

    log = tmp_path / "random.jsonl"
    run_cli([cli("oaieval"), "econarena/random", "econarena.beauty_L", "--registry_path", str(REGISTRY),
             "--record_path", str(log), "--max_samples", "4"], base_env())
    row = next(line for line in summary(log).stdout.splitlines() if line.startswith("econarena/random"))
    run_cli([cli("econarena-report"), str(log), "--out", str(tmp_path / "r"), "--transcripts", "0"], base_env())
    cond = json.loads((tmp_path / "r" / "report.json").read_text())["conditions"][0]
    for metric in ("eas", "ne_proximity", "convergence"):
        m = cond["metrics"][metric]
        assert f"{m['mean']:.3f} [{m['ci95'][0]:.3f}, {m['ci95'][1]:.3f}]" in row, (metric, row)


def test_an_interval_does_not_depend_on_the_order_sessions_reached_the_log():
    from econarena_evals.score.intervals import metric_interval

    values = [0.1, 0.5, 0.52, 0.9, 0.33, 0.47, 0.61]
    assert metric_interval(values, "c", "p", "eas") == metric_interval(values[::-1], "c", "p", "eas")



@pytest.mark.e2e
def test_a_log_a_live_run_still_writes_is_running_with_no_resume_command_and_econarena_run_leaves_it(tmp_path):
    """Read while its run goes on, a log has no final report yet: it is not a killed run to resume.
    The run is held in a batch the server keeps in progress until the test lets it end: the set's
    first eval with nothing answered yet, then beauty_hist (the second) after its first run."""
    import threading
    import time

    from openai_server import BatchBehaviour, OpenAIServer
    from policies import scripted

    hold = threading.Event()
    server = OpenAIServer(scripted, models=("gpt-4o",), batch=BatchBehaviour(hold=hold, run_s=0.5)).start()
    env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-local"}
    out = tmp_path / "runs"
    command = [cli("econarena-run"), "econarena/chat:gpt-4o", "econarena-two-hist", "--out", str(out), "--registry_path",
               str(REGISTRY), "--registry_path", str(TEST_REGISTRY), "--max_samples", "1", "--completion_args",
               "batch=yes,batch_poll_s=0.1"]
    try:
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not server.batch.created:
            time.sleep(0.05)
        live = subprocess.run([cli("econarena-summary"), str(out)], env=env, capture_output=True, text=True)
        again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        hold.set()
        while time.monotonic() < deadline and len(server.batch.created) < 2:
            time.sleep(0.01)
        hold.clear()  # beauty_hist's second run waits
        server.batch.behaviour = BatchBehaviour(hold=hold)
        while time.monotonic() < deadline and len(server.batch.created) < 3:
            time.sleep(0.01)
        answered = subprocess.run([cli("econarena-summary"), str(out)], env=env, capture_output=True, text=True)
        hold.set()
        assert proc.wait(timeout=300) == 0
    finally:
        hold.set()
        server.stop()
    said = live.stdout + live.stderr  # nothing answered yet: the log is named on stderr, not tabled
    assert "a live run is still writing it" in said and "resume_from" not in said, said
    assert again.returncode == 2 and "is being written by a run that is still going" in again.stderr
    row = next(x for x in answered.stdout.splitlines() if " beauty_hist " in x)
    assert row.rstrip().endswith("running"), answered.stdout  # its status column
    assert "a live run is still writing it" in answered.stdout and "resume_from" not in answered.stdout
    assert len(server.batch.created) == 11  # the second command sent nothing: one batch per wave of the set
    done = subprocess.run([cli("econarena-summary"), str(out)], env=env, capture_output=True, text=True)
    assert "running" not in done.stdout and "a live run" not in done.stdout


def plain_summary(folder, uid=None) -> subprocess.CompletedProcess:
    """``econarena-summary`` with no folder named: its own entry point, with evals' shared folder
    (/tmp/evallogs, read by everyone on the machine) at ``folder``, and, with ``uid``, run as
    another user of the machine."""
    as_user = f"os.getuid = lambda: {uid}; " if uid is not None else ""
    code = (f"import os, sys; from pathlib import Path; {as_user}from econarena_evals.report import summary; "
            f"summary.EVALS_LOGS = Path({str(folder)!r}); sys.argv[0] = 'econarena-summary'; sys.exit(summary.main())")
    return subprocess.run([sys.executable, "-c", code], env=base_env(), capture_output=True, text=True, timeout=120)


@pytest.mark.e2e
def test_with_no_folder_named_it_reads_only_the_users_logs_and_says_which_folder(logs):
    """It read everyone's /tmp/evallogs without a word: other people's rows mixed into one's own."""
    mine = plain_summary(logs / "clean")
    assert mine.returncode == 0, mine.stderr
    said = mine.stderr.splitlines()[0]
    assert said.startswith(f"econarena-summary: no folder named, so this reads your 2 log(s) in {logs / 'clean'}, "
                           "the folder where oaieval writes every run given no --record_path (so your other days' runs "
                           "are here too; other users' are not read)"), said
    assert "econarena-summary runs/gpt-4" in said and "left out" not in said
    assert len([line for line in mine.stdout.splitlines() if line.startswith("econarena/nash")]) == 2
    # the same folder, read by another user of the machine: none of these logs are theirs
    other = plain_summary(logs / "clean", uid=os.getuid() + 4242)
    assert other.returncode == 1 and "econarena/nash" not in other.stdout
    assert other.stderr.splitlines()[0].startswith(
        f"econarena-summary: no folder named, so this reads your 0 log(s) in {logs / 'clean'}, 2 of other users "
        "left out, the folder where"), other.stderr
    # named, the folder is read whole, whoever wrote it
    named = summary(logs / "clean")
    assert named.returncode == 0 and "no folder named" not in named.stderr


@pytest.mark.e2e
def test_the_closing_note_is_wrapped_for_a_terminal(tmp_path):
    """The note under the tokens table was one line of 714 characters: wrapped at PROSE_WIDTH, the same words."""
    chat_player(tmp_path / "logs" / "x.jsonl", {"max_tokens": 128}, usage=True)
    proc = summary(tmp_path / "logs", "--price-in", "1", "--price-out", "2")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("tokens used:")[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Tokens as each"))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    note = lines[start:end]
    assert len(note) >= len(NOTE) // PROSE_WIDTH and all(len(line) <= PROSE_WIDTH for line in note), note
    said = " ".join(note)
    assert said.startswith(NOTE + " Cost at 1 per million prompt tokens") and len(said) > 700


@pytest.mark.e2e
def test_a_floor_no_finished_session_gave_is_said_not_computed_not_a_dash(logs):
    """Logs with no finished session: the legend's zero point and floor have no figure; it says so
    instead of a bare '-' after its words."""
    flat = " ".join(summary(logs / "errored").stdout.split())
    assert "up to it) not computed (no finished session); floor: uniform random play not computed" in flat, flat
    assert " -;" not in flat and "random play -" not in flat
