"""What a report says is what the code computed from the runs: tried as an attacker with a shared
folder, and as a careless user, through the real ``oaieval`` and ``econarena-*`` commands against the
local OpenAI-compatible server.

One test per way in: a resume that would write over the log it resumes from, figures forged in a
log, two conditions sent into one ``--out``, a FIFO among the logs, a number a real model wrote past
what the reader took, a reply whose usage is not a count, a reply too large to hold, signals in a
burst, a redirect to another host.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from econarena_evals.log.evallog import read_log
from econarena_evals.log.filing import filing_problems
from econarena_evals.score.metrics import METRICS

from conftest import REGISTRY, TEST_REGISTRY, base_env, cli, run_cli
from openai_server import OpenAIServer
from policies import scripted

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

CELL = "econarena.beauty_L"
SAMPLES = "2"
CALLS = 2 * 10 * 5  # seat calls of two beauty_L sessions
# econarena-run's set of two cells (beauty_L, auction_L): what it does per condition and per eval
# needs no more (tests/run/test_run_set.py runs the whole five-cell set)
TWO = ["econarena-two", "--registry_path", str(TEST_REGISTRY)]


@pytest.fixture(scope="module")
def srv():
    server = OpenAIServer(scripted, models=("gpt-4",)).start()
    yield server
    server.stop()


@pytest.fixture
def env(srv):
    return base_env() | {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "sk-local"}


def oaieval(log: Path, *extra: str, fn: str = "econarena/chat:gpt-4", cell: str = CELL) -> list[str]:
    return [cli("oaieval"), fn, cell, "--registry_path", str(REGISTRY), "--record_path", str(log),
            "--max_samples", SAMPLES, *extra]


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ---- a resume never writes over its source ----

@pytest.mark.parametrize("how", ["same path", "symlink", "hard link", "in the folder"])
def test_a_resume_that_would_write_over_its_source_is_refused_and_the_log_kept(srv, env, tmp_path, how):
    log = tmp_path / "run.jsonl"
    run_cli(oaieval(log), env)
    kept = log.read_bytes()
    source, extra_env = str(log), {}
    if how == "same path":
        target = log
    elif how == "symlink":
        target = tmp_path / "link.jsonl"
        target.symlink_to(log)
    elif how == "hard link":
        target = tmp_path / "hard.jsonl"
        os.link(log, target)
    else:  # ECONARENA_RESUME names the folder, --record_path one of its logs
        target, source, extra_env = log, "", {"ECONARENA_RESUME": str(tmp_path)}
    before = len(srv.requests)
    args = oaieval(target) + (["--extra_eval_params", f"resume_from={source}"] if source else [])
    proc = subprocess.run(args, env=env | extra_env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    said = [line for line in proc.stderr.splitlines() if line.startswith("econarena:")]
    assert len(said) == 1 and "would write over" in said[0] and "Traceback" not in proc.stderr
    assert log.read_bytes() == kept and target.read_bytes() == kept  # untouched, through every name
    assert len(srv.requests) == before  # refused before any call
    # a new --record_path resumes it: nothing is paid again
    run_cli(oaieval(tmp_path / "new.jsonl", "--extra_eval_params", f"resume_from={log}"), env)
    assert len(srv.requests) == before


# ---- scores are derived, never trusted ----

def killed_and_forged(full: Path, dest: Path, finished: int, eas: float = 0.999) -> Path:
    """The log of a run killed after ``finished`` sessions (a prefix of ``full``'s lines, as kill -9
    leaves one), with every figure of those sessions' events forged to ``eas``."""
    out, seen = [], 0
    for row in rows(full):
        if "final_report" in row:
            break
        if row.get("type") == "econarena_session":
            row["data"].update({m: eas for m in METRICS})
            seen += 1
        out.append(row)
        if seen == finished:
            break
    dest.write_text("".join(json.dumps(r) + "\n" for r in out))
    return dest


def means(path: Path) -> dict[str, float]:
    return {m: read_log(path).final_report[m] for m in METRICS}


@pytest.mark.parametrize("via", ["resume_from", "ECONARENA_RESUME folder"])
def test_forged_figures_in_a_resumed_log_are_named_and_never_shown_or_carried(srv, env, tmp_path, via):
    full = tmp_path / "full" / "full.jsonl"
    full.parent.mkdir()
    run_cli(oaieval(full)[:-2] + ["--max_samples", "4"], env)
    truth = means(full)
    assert abs(truth["eas"] - 0.999) > 0.1
    shared = tmp_path / "shared"
    shared.mkdir()
    killed = killed_and_forged(full, shared / "killed.jsonl", finished=2)
    assert filing_problems(killed), "a forged figure must be a filing problem"
    resumed = tmp_path / "resumed.jsonl"
    extra = ["--extra_eval_params", f"resume_from={killed}"] if via == "resume_from" else []
    extra_env = {"ECONARENA_RESUME": str(shared)} if via != "resume_from" else {}
    proc = run_cli(oaieval(resumed)[:-2] + ["--max_samples", "4"] + extra, env | extra_env)
    assert "are not what their runs score" in proc.stderr
    # the resumed run's report is the mean of the re-derived sessions: the uninterrupted run's
    assert means(resumed) == truth
    assert not filing_problems(resumed)
    raw = [r["data"] for r in rows(resumed) if r.get("type") == "econarena_session"]
    assert len(raw) == 4 and all(d["eas"] != 0.999 for d in raw)  # no forged figure carried into the new log
    report_line = next(r["final_report"] for r in rows(resumed) if "final_report" in r)
    assert report_line["eas"] == truth["eas"]
    # the summary and the report of the killed log show what its runs score, and name the forgery
    summary = run_cli([cli("econarena-summary"), str(killed)], env)
    assert "0.999" not in summary.stdout.split("\n\n")[0] and "not what the runs score" in summary.stdout
    derived_two = read_log(killed)
    assert all(s["eas"] != 0.999 for s in derived_two.sessions) and len(derived_two.forged) == 2
    run_cli([cli("econarena-report"), str(killed), "--out", str(tmp_path / "report")], env)
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    shown = report["conditions"][0]["metrics"]["eas"]["mean"]
    assert abs(shown - 0.999) > 0.1 and abs(shown - sum(s["eas"] for s in derived_two.sessions) / 2) < 1e-9
    assert any("not what its runs score" in (n["why"] or "") for n in report["inputs"])
    # a finished log with a forged mean: the derived one is shown, the forged one named
    forged_report = tmp_path / "forged_report" / "log.jsonl"
    forged_report.parent.mkdir()
    forged_report.write_text("".join(json.dumps({**r, "final_report": {**r["final_report"], "eas": 0.999}}
                                                if "final_report" in r else r) + "\n" for r in rows(full)))
    summary = run_cli([cli("econarena-summary"), "--strict", str(forged_report)], env, returncode=1)
    assert f"{truth['eas']:.3f}" in summary.stdout.splitlines()[2] and "0.999" in summary.stdout.split("!!")[1]
    assert filing_problems(forged_report)


OLD_LOGS = sorted((Path(__file__).parent / "fixtures" / "old_logs").glob("*.jsonl.gz"))


def assert_rescores_to_what_it_logged(path: Path) -> None:
    """The log's own lines (not the reader's derived view): every finished session's metrics and the
    final report are what the scorer derives from its run events."""
    log = read_log(path)
    assert not log.forged, log.forged
    per_session, report = log.rescore()
    lines = rows(path)
    logged_report = next(r["final_report"] for r in lines if "final_report" in r)
    for key, value in report.items():
        assert logged_report[key] == value, key
    sessions = [r["data"] for r in lines if r.get("type") == "econarena_session"]
    assert sessions
    for event in sessions:
        mine = per_session[event["session"]]
        assert (mine is None) == bool(event["errored"])
        for metric in METRICS:
            if mine is not None:
                assert event[metric] == mine[log.players[0]][metric]


@pytest.mark.parametrize("gz", OLD_LOGS, ids=[p.name for p in OLD_LOGS])
def test_an_old_log_reads_and_rescores_to_what_it_logged(gz, tmp_path):
    import gzip
    path = tmp_path / gz.name[: -len(".gz")]
    path.write_bytes(gzip.decompress(gz.read_bytes()))
    assert_rescores_to_what_it_logged(path)
    assert not filing_problems(path)
    summary = run_cli([cli("econarena-summary"), "--strict", str(path)], base_env())
    eas = read_log(path).final_report["eas"]
    assert f"{eas:.3f}" in summary.stdout.splitlines()[2]
    run_cli([cli("econarena-report"), str(path), "--out", str(tmp_path / "report")], base_env())
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["conditions"][0]["metrics"]["eas"]["mean"] == eas


# ---- what the eval writes, the reader reads ----

HUGE = 5790624381138623  # what SmolLM2-135M wrote under a grammar that did not bound the number


def huge_in_run_one(text: str) -> str:
    """The scripted player, but seat 5 of run 1 answers the 16-digit number a real model wrote."""
    from econarena_evals.games import read_prompt
    facts = read_prompt(text)
    if facts.seat == 5 and facts.run == 2:
        return json.dumps({"understanding": "u", "choice": HUGE, "reason": "r"})
    return scripted(text)


def test_a_sixteen_digit_answer_is_a_rule_break_the_reader_reads_back(tmp_path):
    server = OpenAIServer(huge_in_run_one, models=("gpt-4",)).start()
    try:
        env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-local"}
        log = tmp_path / "huge.jsonl"
        run_cli(oaieval(log, cell="econarena.auction_L"), env)
    finally:
        server.stop()
    written = [r["data"] for r in rows(log) if r.get("type") == "econarena_run" and r["data"]["run"] == 1]
    seats = [s for r in written for s in r["seats"] if s["action"] == HUGE]
    assert len(seats) == 2 and not any(s["valid"] for s in seats)  # logged as the rule break it is
    read = read_log(log)
    assert not read.problems, read.problems
    assert len(read.runs) == 20 and sum(s["action"] == HUGE for r in read.runs for s in r["seats"]) == 2
    assert_rescores_to_what_it_logged(log)  # the finished sessions stay finished
    assert not filing_problems(log)
    run_cli([cli("econarena-report"), str(log), "--out", str(tmp_path / "report")], env)
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["conditions"][0]["rule_break_rate"] == sum(
        not s["valid"] for r in read.runs for s in r["seats"]) / 100
    counts = next(iter(next(iter(report["rule_breaks"].values())).values()))
    assert counts["seats"] == 100 and counts["out of range"] == sum(
        not s["valid"] and s["action"] is not None for r in read.runs for s in r["seats"]) >= 2
    # the writer's bound on a game's own numbers is the reader's: a cell past it is refused, not logged
    proc = run_cli(oaieval(tmp_path / "big.jsonl", "--extra_eval_params", "prize=1e16", fn="econarena/nash"),
                   base_env(), returncode=2)
    assert "prize 1e+16 is past 1e+15, the most a log holds" in proc.stderr


# ---- only regular files are read ----

def test_a_fifo_among_the_logs_is_skipped_in_one_line_by_every_reader(srv, env, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    run_cli(oaieval(folder / "a.jsonl"), env)
    os.mkfifo(folder / "b.jsonl")  # nothing ever writes it: any open for reading would wait for ever
    summary = run_cli([cli("econarena-summary"), str(folder)], env, timeout=60)
    assert "b.jsonl: skipped: a FIFO, not a log: skipped unread" in summary.stderr
    assert summary.stdout.startswith("player")
    run_cli([cli("econarena-report"), str(folder), "--out", str(tmp_path / "report")], env, timeout=120)
    inputs = json.loads((tmp_path / "report" / "report.json").read_text())["inputs"]
    assert {n["file"].rsplit("/", 1)[1]: n["status"] for n in inputs} == {"a.jsonl": "used", "b.jsonl": "skipped"}
    # a resume from the folder takes the log and passes the FIFO over; one named by resume_from is refused
    before = len(srv.requests)
    run_cli(oaieval(tmp_path / "resumed.jsonl", "--extra_eval_params", f"resume_from={folder}"), env, timeout=120)
    assert len(srv.requests) == before
    proc = run_cli(oaieval(tmp_path / "r2.jsonl", "--extra_eval_params", f"resume_from={folder / 'b.jsonl'}"), env,
                   timeout=60, returncode=2)
    assert "is a FIFO, not a log" in proc.stderr
    proc = run_cli(oaieval(folder / "b.jsonl"), env, timeout=60, returncode=2)  # as a --record_path
    assert "is not a regular file" in proc.stderr
    # econarena-run: a FIFO where its log would go is passed over, and the log written beside it
    out = tmp_path / "out"
    args = [cli("econarena-run"), "econarena/nash", *TWO, "--out", str(out), "--max_samples", "1"]
    run_cli(args + ["--seed", "1"], base_env(), timeout=300)
    [folder] = out.glob("econarena_nash-*")
    os.rename(folder / "econarena.beauty_L.jsonl", folder / "moved.jsonl.old")
    os.mkfifo(folder / "econarena.beauty_L.jsonl")
    run = run_cli(args + ["--seed", "1"], base_env(), timeout=300)
    assert "econarena.beauty_L.jsonl is a FIFO, not a log: skipped unread" in run.stderr
    assert read_log(folder / "econarena.beauty_L.resumed.jsonl").final_report["sessions"] == 1


# ---- a reply is kept whatever its usage says ----

BAD_COUNTS = (b"Infinity", b"NaN", b"1e400", b"-3", b"12.5")


def usage_not_a_count(n: int, payload: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
    """Every reply's prompt_tokens is something no count is: Infinity, NaN, 1e400, ..., in turn."""
    marker = 987654321
    payload = {**payload, "usage": {**payload["usage"], "prompt_tokens": marker}}
    return 200, json.dumps(payload).encode().replace(str(marker).encode(), BAD_COUNTS[n % len(BAD_COUNTS)]), {}


def test_a_reply_whose_usage_is_no_count_is_recorded_and_scored(tmp_path):
    server = OpenAIServer(scripted, models=("gpt-4",), answer=usage_not_a_count).start()
    try:
        env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-local"}
        for fn in ("econarena/chat:gpt-4", "gpt-4"):  # ours, and evals' own fn
            log = tmp_path / f"{fn.replace('/', '_')}.jsonl"
            before = server.answered()
            proc = run_cli(oaieval(log, fn=fn), env)
            assert server.answered() - before == CALLS  # nothing sent twice
            read = read_log(log)
            assert read.final_report["sessions"] == 2 and read.final_report["errored_sessions"] == 0, proc.stderr[-2000:]
            sampling = [r["data"] for r in rows(log) if r.get("type") == "sampling"]
            assert len(sampling) == CALLS
            assert all("prompt_tokens" not in d["usage"] or d["usage"]["prompt_tokens"] == 0 for d in sampling)
            assert all(d["usage"]["completion_tokens"] > 0 for d in sampling)
            noted = [d["usage_note"] for d in sampling if "usage_note" in d]
            assert len(noted) == CALLS and all(n.startswith("not a token count, recorded as missing: prompt_tokens=")
                                               for n in noted)
            assert_rescores_to_what_it_logged(log)
            summary = run_cli([cli("econarena-summary"), str(log)], env)
            assert "tokens used" in summary.stdout
    finally:
        server.stop()


# ---- any number of signals is one clean stop ----

WORDS = {143: "terminated", 130: "interrupted", 129: "hung up"}


# (signals, seconds between two): the stop path is a few milliseconds long; a signal that landed in
# it raised there (a traceback, exit 1, no stop event, no resume command)
BURSTS = {"two SIGTERMs 2 ms apart": ((signal.SIGTERM,) * 2, 0.002),
          "two SIGTERMs 10 ms apart": ((signal.SIGTERM,) * 2, 0.01),
          "mixed, 3 ms apart": ((signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGINT, signal.SIGTERM), 0.003),
          "sixty SIGTERMs over 0.3 s": ((signal.SIGTERM,) * 60, 0.005)}


@pytest.mark.parametrize("burst,gap", BURSTS.values(), ids=list(BURSTS))
def test_signals_in_a_burst_while_calls_wait_on_the_pace_are_one_clean_stop(tmp_path, burst, gap):
    from openai_server import RateLimiter
    server = OpenAIServer(scripted, models=("gpt-4",), limiter=RateLimiter(rpm=240)).start()
    try:
        env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-local"}
        log = tmp_path / "paced.jsonl"
        proc = subprocess.Popen(oaieval(log), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while server.answered() < 8 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        assert proc.poll() is None, "the run ended before the pace held any call"
        for sig in burst:
            if proc.poll() is None:
                os.kill(proc.pid, sig)
                time.sleep(gap)
        _, err = proc.communicate(timeout=120)
    finally:
        server.stop()
    # the stop is the first signal handled (signals pending at once are handled in the order of their numbers)
    assert proc.returncode in {128 + int(sig) for sig in burst}, err[-3000:]
    assert "Traceback" not in err
    said = [line for line in err.splitlines() if line.startswith("econarena: stopped")]
    assert len(said) == 1 and "answered seat call(s) are kept in" in said[0], err[-3000:]
    assert any("resume_from=" in line for line in err.splitlines())
    stops = [r for r in rows(log) if r.get("type") == "econarena_stop"]
    assert len(stops) == 1 and stops[0]["data"]["stopped"] == WORDS[proc.returncode]
    assert read_log(log).calls >= stops[0]["data"]["calls"] > 0  # a call the wait let end is kept too


# ---- econarena-run: one folder per condition ----

def summary_rows(stdout: str) -> list[str]:
    lines = stdout.split("\n\n")[0].splitlines()[2:]
    # the legend under the table starts "mean [" and may wrap onto lines of its own
    return lines[: next((i for i, line in enumerate(lines) if line.startswith("mean [")), len(lines))]


def test_two_conditions_into_one_out_are_two_results(tmp_path):
    other = OpenAIServer(scripted, models=("gpt-4", "org/model-a", "org_model-a")).start()
    server = OpenAIServer(scripted, models=("gpt-4", "org/model-a", "org_model-a")).start()
    try:
        out = tmp_path / "out"

        def run(fn: str, *extra: str, base: str = server.base_url) -> subprocess.CompletedProcess:
            env = base_env() | {"OPENAI_BASE_URL": base, "OPENAI_API_KEY": "sk-local"}
            return run_cli([cli("econarena-run"), fn, *TWO, "--out", str(out), *extra], env, timeout=600)

        first = run("econarena/chat:gpt-4", "--max_samples", "1")
        assert ": kept " not in first.stderr
        runs = [("econarena/chat:gpt-4", "--max_samples", "1", "--completion_args", "max_tokens=300"),
                ("econarena/chat:gpt-4", "--max_samples", "2")]
        for args in runs:
            proc = run(*args)
            assert ": kept " not in proc.stderr and proc.stderr.count(" --record_path ") == 2  # never run: no more
        before = other.answered()
        proc = run("econarena/chat:gpt-4", "--max_samples", "1", base=other.base_url)  # another endpoint
        assert ": kept " not in proc.stderr and other.answered() - before == 2 * 50
        run("econarena/chat:org/model-a", "--max_samples", "1")
        run("econarena/chat:org_model-a", "--max_samples", "1")
        folders = sorted(p for p in out.iterdir() if p.is_dir())
        assert len(folders) == 6  # one per condition
        stated = [json.loads((f / "condition.json").read_text()) for f in folders]
        assert sorted(s["fn"] for s in stated).count("econarena/chat:gpt-4") == 4
        assert {s["fn"] for s in stated} >= {"econarena/chat:org/model-a", "econarena/chat:org_model-a"}
        assert all("sk-local" not in (f / "condition.json").read_text() for f in folders)
        assert all(len(list(f.glob("*.jsonl"))) == 2 for f in folders)
        # the same command again keeps what each condition finished
        again = run("econarena/chat:gpt-4", "--max_samples", "1", "--completion_args", "max_tokens=300")
        assert again.stderr.count(": kept ") == 2
        # the summary of the --out shows every result: 6 conditions x 2 cells
        summary = run_cli([cli("econarena-summary"), str(out)], base_env())
        assert len(summary_rows(summary.stdout)) == 6 * 2, summary.stdout
        assert "superseded" not in summary.stderr
    finally:
        server.stop()
        other.stop()


def test_logs_laid_out_by_an_earlier_version_are_not_taken_for_this_condition(tmp_path):
    old = tmp_path / "econarena_nash"
    old.mkdir()
    run_cli(oaieval(old / "econarena.beauty_L.jsonl", fn="econarena/nash"), base_env())
    proc = run_cli([cli("econarena-run"), "econarena/nash", "econarena", "--out", str(tmp_path), "--max_samples", "2"],
                   base_env(), returncode=2)
    assert len(proc.stderr.strip().splitlines()) == 1 and "move them into" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["econarena_nash"]


# ---- replies have a size limit ----

def gzip_bomb(inflated: int = 2**30) -> bytes:
    """A gzip body of about 1 MB that inflates to ``inflated`` bytes (zeros), made a MiB at a time."""
    import zlib
    packer, zeros, out = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS), bytes(2**20), []
    for _ in range(inflated // 2**20):
        out.append(packer.compress(zeros))
    out.append(packer.flush())
    return b"".join(out)


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return gzip_bomb()


def test_a_gzip_bomb_is_given_up_on_at_the_limit_as_the_endpoint_s_failure(bomb, tmp_path):
    server = OpenAIServer(scripted, models=("gpt-4",),
                          answer=lambda n, payload: (200, bomb, {"Content-Encoding": "gzip"})).start()
    try:
        env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-local"}
        log = tmp_path / "bomb.jsonl"
        proc = run_cli(oaieval(log, "--extra_eval_params", "max_attempts=2", fn="econarena/chat:gpt-4")[:-2]
                       + ["--max_samples", "1", "--extra_eval_params", "max_attempts=2"], env,
                       returncode=3, timeout=300)
        assert len(bomb) < 2 * 2**20
    finally:
        server.stop()
    assert "MemoryError" not in proc.stderr and "Traceback" not in proc.stderr
    errors = [s["error"] for s in read_log(log).sessions]
    assert errors and all("inflates past 4 MiB" in e for e in errors), errors


@pytest.mark.parametrize("limit,kept", [(None, False), ("8", True)], ids=["default 4 MiB", "max_reply_mib=8"])
def test_a_reply_past_the_limit_fails_and_one_within_it_is_scored(tmp_path, limit, kept):
    from openai_server import with_reply
    big = "x" * (5 * 2**20)  # 5 MiB of prose: a rule break, when read
    server = OpenAIServer(scripted, models=("gpt-4",), answer=lambda n, payload: (200, with_reply(payload, big), {})
                          ).start()
    try:
        env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-local"}
        log = tmp_path / "big.jsonl"
        extra = ["--completion_args", f"max_reply_mib={limit}"] if limit else []
        run_cli([cli("oaieval"), "econarena/chat:gpt-4", CELL, "--registry_path", str(REGISTRY), "--record_path",
                 str(log), "--max_samples", "1", "--extra_eval_params", "max_attempts=1", *extra], env,
                returncode=0 if kept else 3, timeout=300)
    finally:
        server.stop()
    read = read_log(log)
    if kept:
        assert read.final_report["rule_following"] == 0 and read.final_report["errored_sessions"] == 0
        sampling = [r["data"] for r in rows(log) if r.get("type") == "sampling"]
        assert len(sampling) == 50 and all(d["sampled_full_chars"] == [len(big)] for d in sampling)
        assert_rescores_to_what_it_logged(log)
    else:
        assert "past 4 MiB" in read.sessions[0]["error"] and read.calls == 0


# ---- redirects stay on their origin ----

@pytest.mark.parametrize("status", [307, 308])
def test_a_redirect_to_another_host_is_not_followed_and_no_header_goes_there(tmp_path, status):
    elsewhere = OpenAIServer(lambda _: json.dumps({"choice": 0}), models=("gpt-4",)).start()
    target = elsewhere.base_url + "/chat/completions"
    server = OpenAIServer(scripted, models=("gpt-4",),
                          answer=lambda n, payload: (status, payload, {"Location": target})).start()
    try:
        env = base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-local"}
        log = tmp_path / "redirected.jsonl"
        proc = run_cli([cli("oaieval"), "econarena/chat:gpt-4", CELL, "--registry_path", str(REGISTRY),
                        "--record_path", str(log), "--max_samples", "1", "--extra_eval_params", "max_attempts=1",
                        "--completion_args", 'extra_headers={"x-api-key": "secret-header-value"}'], env,
                       returncode=3, timeout=300)
    finally:
        server.stop()
        elsewhere.stop()
    assert elsewhere.requests == []  # nothing, no header, ever reached the other host
    said = [line for line in proc.stderr.splitlines() if "redirected a request to another host" in line]
    assert len(said) == 1 and elsewhere.base_url.split("//")[1].split("/")[0] in said[0]
    read = read_log(log)
    assert read.calls == 0 and all(s["errored"] for s in read.sessions)  # no reply of that host was scored
    assert "secret-header-value" not in proc.stderr + log.read_text()


def test_a_run_resumed_on_a_fixed_endpoint_takes_the_place_of_the_errored_one(srv, env, tmp_path):
    """A dead endpoint errors every session; the resume with the endpoint fixed finishes them. The
    endpoint names the player, so the two logs are columns apart: the report must still use the
    resumed run in the errored one's place, or --strict fails after the work was done."""
    logs = tmp_path / "logs"
    logs.mkdir()
    dead, fixed = logs / "dead.jsonl", logs / "fixed.jsonl"
    run_cli(oaieval(dead, "--extra_eval_params", "max_attempts=1,breaker_threshold=2"),
            env | {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, returncode=3)
    assert read_log(dead).resumed_from is None
    run_cli(oaieval(fixed, "--extra_eval_params", f"resume_from={dead}"), env)
    assert read_log(fixed).resumed_from == str(dead.resolve())
    summary = run_cli([cli("econarena-summary"), "--strict", str(logs)], env)  # exit 0: nothing errored is shown
    assert "127.0.0.1:9" not in summary.stdout.split("\n\n")[0], summary.stdout
    assert f"a finished run resumed from it, and its log is used: {fixed}" in summary.stdout + summary.stderr


def test_a_resumed_log_whose_source_path_now_holds_another_model_hides_neither(srv, env, tmp_path):
    """Resume a run, move its folder, run another model at the path the resume named: the moved
    resumed log names a log it did not resume (another player). Both models' rows are shown, the
    conflict is named, and --strict fails on it."""
    logs, moved = tmp_path / "logs", tmp_path / "moved"
    logs.mkdir()
    dead, fixed = logs / "dead.jsonl", logs / "fixed.jsonl"
    run_cli(oaieval(dead, "--extra_eval_params", "max_attempts=1,breaker_threshold=2"),
            env | {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, returncode=3)
    run_cli(oaieval(fixed, "--extra_eval_params", f"resume_from={dead}"), env)
    logs.rename(moved)
    logs.mkdir()
    run_cli(oaieval(dead, fn="econarena/random"), env)  # another model's run, at the path the resume named
    assert read_log(moved / "fixed.jsonl").resumed_from == str(dead.resolve())

    summary = run_cli([cli("econarena-summary"), str(moved), str(logs)], env)
    rows = summary.stdout.split("\n\n")[0]
    assert "econarena/random " in rows and f"econarena/chat:gpt-4 @ {srv.base_url.split('/')[2]} " in rows, rows
    assert (f"!! {moved / 'fixed.jsonl'}: it names {dead} as the log it resumed from, but it is another condition "
            "(players: econarena/random vs econarena/chat:gpt-4): both are used") in summary.stdout, summary.stdout
    assert "resumed from it" not in summary.stderr  # no log took another's place by its claim
    strict = run_cli([cli("econarena-summary"), "--strict", str(moved), str(logs)], env, returncode=1)
    assert "1 log(s) naming as resumed from a log they did not resume" in strict.stderr
