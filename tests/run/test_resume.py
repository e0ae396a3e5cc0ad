"""Resuming a paid run: the real oaieval, a real local server that counts requests.

One SIGKILL mid-way through beauty_hist.test (100 sessions, 50 calls each), then a resume: the
server's count proves no finished run was paid for twice (a cut-off session goes on from its first
unfinished run), and the resumed report is the uninterrupted run's, byte for byte (the server's
scripted answers are a function of the prompt).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest
from test_e2e import assert_rescores

from econarena_evals.games import outcome_from_event, run_event
from econarena_evals.games.beauty import score_run
from econarena_evals.log.evallog import read_log
from econarena_evals.run.resume import ResumeRefused, resumption, sent_in_batches
from econarena_evals.run.resume_command import hint, next_record_path, resume_command
from econarena_evals.score.metrics import METRICS, session_metrics

from conftest import ERRORED, REGISTRY, base_env, cli, dead_endpoint, run_cli
from openai_server import OpenAIServer
from policies import scripted

EVAL = "econarena.beauty_hist.test.v0"
SESSIONS, CALLS, THREADS, SEED = 100, 50, 10, 20220722
SAMPLES = REGISTRY / "data" / "econarena" / "beauty_hist_test.jsonl"


@pytest.fixture(scope="module")
def srv():
    server = OpenAIServer(scripted, models=("gpt-4",)).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def env(srv):
    return base_env() | {"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "sk-local",
                         "EVALS_THREADS": str(THREADS)}


def command(log: Path, *extra: str) -> list[str]:
    return [cli("oaieval"), "econarena/chat:gpt-4", EVAL, "--registry_path", str(REGISTRY),
            "--record_path", str(log), *extra]


def run_of_seed() -> dict[int, tuple[int, int]]:
    """The eval's per-call seed (EconArena._call_seed) -> (session, run): which run a request was for."""
    sessions = [json.loads(line)["session"] for line in SAMPLES.read_text().splitlines() if line.strip()]
    out = {}
    for s in sessions:
        for run in range(10):
            for seat in range(1, 6):
                key = f"{SEED}:beauty_hist:{s}:{run}:{seat}"
                out[int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") >> 1] = (s, run)
    return out


def durable_sessions(log: Path) -> int:
    try:
        return log.read_bytes().count(b'"type": "econarena_session"')
    except OSError:
        return 0


def report_bytes(log) -> str:
    return json.dumps(log.final_report, sort_keys=True)


@pytest.fixture(scope="module")
def uninterrupted(srv, env, tmp_path_factory):
    log = tmp_path_factory.mktemp("full") / "full.jsonl"
    before = len(srv.requests)
    run_cli(command(log), env)
    assert len(srv.requests) - before == SESSIONS * CALLS
    return read_log(log)


@pytest.mark.e2e
def test_sigkill_mid_way_then_resume_pays_only_for_what_was_missing(srv, env, uninterrupted, tmp_path):
    first = tmp_path / "first.jsonl"
    n0 = len(srv.requests)
    proc = subprocess.Popen(command(first), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while durable_sessions(first) < 30 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    time.sleep(0.5)  # the server's threads finish with the killed connections
    n1 = len(srv.requests)
    killed = read_log(first)
    assert killed.final_report is None, "the kill came too late to test anything"
    kept = {s["session"] for s in killed.sessions if not s["errored"]}
    assert 30 <= len(kept) < SESSIONS

    seeds = run_of_seed()
    # a connection the kill cut before its body arrived is logged with an empty body: nothing asked
    started = {seeds[r["body"]["seed"]][0] for r in srv.requests[n0:n1] if r["body"]}
    in_flight = started - kept  # started, not on disk when killed
    # durable sessions: a kill loses only the sessions in flight, at most one per thread
    assert len(in_flight) <= THREADS, (len(started), len(kept))
    finished_runs = {(r["session"], r["run"]) for r in killed.runs}  # on disk: kept by the resume
    assert {(s, r) for s, r in finished_runs if s not in kept}, "no cut-off session had a finished run on disk"

    second = tmp_path / "second.jsonl"
    run_cli(command(second, "--extra_eval_params", f"resume_from={first}"), env)
    n2 = len(srv.requests)
    replayed = {seeds[r["body"]["seed"]] for r in srv.requests[n1:n2]}
    assert not replayed & finished_runs  # no finished run played again, in any session
    # every answered seat call on disk is reused: the resume sends only the others
    assert n2 - n1 == SESSIONS * CALLS - killed.calls
    paid_twice = (n1 - n0) - killed.calls  # answered, but not on disk when killed
    # each answered call is flushed before it frees its slot: a kill loses only the calls in flight
    assert paid_twice <= THREADS * 5
    assert n2 - n0 <= SESSIONS * CALLS + THREADS * 5

    print(f"SIGKILL at {len(kept)} durable sessions: kept {len(kept)} sessions and {len(finished_runs)} runs, "
          f"{len(in_flight)} sessions in flight, calls paid twice {paid_twice}, calls in the resume {n2 - n1}, "
          f"total {n2 - n0}")
    resumed = read_log(second)
    assert not resumed.problems
    assert resumed.final_report["sessions"] == SESSIONS and resumed.final_report["errored_sessions"] == 0
    assert len(resumed.sessions) == SESSIONS and len(resumed.runs) == SESSIONS * 10
    marked = {s["session"] for s in resumed.sessions if s.get("resumed_from") == str(first.resolve())}
    assert marked == kept
    assert {(r["session"], r["run"]) for r in resumed.runs if "resumed_from" in r} == finished_runs
    # the report is the uninterrupted run's, byte for byte (token usage included), and re-scores
    assert report_bytes(resumed) == report_bytes(uninterrupted)
    assert_rescores(resumed)
    # copied events keep their original sample ids
    def ids(log):
        rows = [json.loads(line) for line in log.path.read_text().splitlines() if line.strip()]
        return {r["data"]["session"]: r["sample_id"] for r in rows if r.get("type") == "econarena_session"}
    assert ids(resumed) == ids(uninterrupted)

    # econarena-summary shows the killed log as partial, with the command that resumes it
    summary = subprocess.run([cli("python"), "-m", "econarena_evals.report.summary", str(first)], env=env,
                             capture_output=True, text=True)
    assert "beauty_hist.test" in summary.stdout and "partial" in summary.stdout
    assert f"resume_from={first.resolve()}" in summary.stdout


@pytest.mark.e2e
def test_resume_from_a_finished_log_plays_nothing(srv, env, uninterrupted, tmp_path):
    before = len(srv.requests)
    log = tmp_path / "again.jsonl"
    run_cli(command(log, "--extra_eval_params", f"resume_from={uninterrupted.path}"), env)
    assert len(srv.requests) == before
    again = read_log(log)
    assert report_bytes(again) == report_bytes(uninterrupted)
    assert_rescores(again)
    # a directory (oaievalset's whole set): this condition's log in it is found and resumed
    run_cli(command(tmp_path / "from_dir.jsonl", "--extra_eval_params", f"resume_from={uninterrupted.path.parent}"),
            env)
    assert len(srv.requests) == before
    assert report_bytes(read_log(tmp_path / "from_dir.jsonl")) == report_bytes(uninterrupted)


@pytest.mark.e2e
def test_resume_from_another_condition_is_refused_before_any_call(srv, env, uninterrupted, tmp_path):
    before = len(srv.requests)
    proc = subprocess.run(
        command(tmp_path / "other.jsonl", "--extra_eval_params", f"resume_from={uninterrupted.path},temperature=0"),
        env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "another condition" in proc.stderr and re.search(r"temperature: [0-9.]+ vs 0\b", proc.stderr)
    assert len(srv.requests) == before
    # the environment variable works the same way
    proc = subprocess.run([cli("oaieval"), "econarena/chat:gpt-4", "econarena.beauty_L.test.v0", "--registry_path",
                           str(REGISTRY), "--record_path", str(tmp_path / "env.jsonl")],
                          env=env | {"ECONARENA_RESUME": str(uninterrupted.path)}, capture_output=True, text=True)
    assert proc.returncode != 0 and "eval: econarena.beauty_hist.test.v0 vs econarena.beauty_L.test.v0" in proc.stderr
    assert len(srv.requests) == before


@pytest.mark.e2e
def test_ctrl_c_prints_the_command_that_resumes_and_it_works(srv, env, tmp_path):
    log = tmp_path / "log.jsonl"
    proc = subprocess.Popen(command(log, "--max_samples", "30", "--extra_eval_params", "max_attempts=4"), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while durable_sessions(log) < 5 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted (Ctrl-C)" in err and "Traceback" not in err
    assert "is not answering" not in err  # a stop of the user's, at a live endpoint: nothing to fix
    line = next(x for x in err.splitlines() if "resume_from=" in x).strip()
    args = shlex.split(line)
    # the command carries the endpoint the run used (never a key)
    assert args[0] == f"OPENAI_BASE_URL={srv.base_url}" and "OPENAI_API_KEY" not in line
    assert args[args.index("--extra_eval_params") + 1] == f"max_attempts=4,resume_from={log.resolve()}"
    assert args[args.index("--record_path") + 1] == str(tmp_path / "log.resumed.jsonl")
    kept_runs = len({(r["session"], r["run"]) for r in read_log(log).runs})
    before = len(srv.requests)
    run_cli(["bash", "-c", line], env)  # the printed command, as printed
    assert kept_runs * 5 <= read_log(log).calls
    assert len(srv.requests) - before == 30 * CALLS - read_log(log).calls
    assert read_log(tmp_path / "log.resumed.jsonl").final_report["sessions"] == 30


@pytest.mark.e2e
def test_a_dead_endpoint_says_to_fix_it_before_the_resume_command(tmp_path):
    """Every call fails to connect: the breaker presumes the endpoint down, the sessions error, and
    the lines before the resume command say to fix the endpoint first (the command goes to it again)."""
    log = tmp_path / "log.jsonl"
    proc = run_cli([cli("oaieval"), "econarena/chat:gpt-4", "econarena.beauty_L", "--registry_path", str(REGISTRY),
                    "--record_path", str(log), "--max_samples", "1", "--extra_eval_params", "call_timeout_s=3"],
                   dead_endpoint(base_env()), returncode=ERRORED)
    said = proc.stderr[proc.stderr.index("econarena: 1 session(s) errored."):]
    assert said.index("The endpoint is not answering (endpoint presumed down") < said.index("fix it first") \
        < said.index("To resume it"), said
    # it never answered: a wrong address or a server not started, not one that went away
    assert "none answered in this run" in said
    assert "OPENAI_BASE_URL=http://127.0.0.1:9/v1" in said and "resume_from=" in said


# ---- the pieces, without a server ----

def test_resume_command_keeps_the_other_params_and_moves_the_log(tmp_path):
    log = tmp_path / "run.jsonl"
    cmd = f"oaieval gpt-4 econarena.beauty_L --record_path {log} --extra_eval_params=temperature=0,resume_from=/old"
    args = shlex.split(resume_command(cmd, str(log)))
    assert args[:3] == ["oaieval", "gpt-4", "econarena.beauty_L"]
    assert args[args.index("--extra_eval_params") + 1] == f"temperature=0,resume_from={log}"
    assert args[args.index("--record_path") + 1] == str(tmp_path / "run.resumed.jsonl")
    (tmp_path / "run.resumed.jsonl").touch()
    assert next_record_path(str(tmp_path / "run.resumed.jsonl")) == str(tmp_path / "run.resumed2.jsonl")
    # a path --extra_eval_params cannot carry goes through the environment
    odd = tmp_path / "a,b.jsonl"
    expected = f"ECONARENA_RESUME={shlex.quote(str(odd))} oaieval"
    assert resume_command("oaieval gpt-4 econarena.beauty_L", str(odd)).startswith(expected)


@pytest.mark.parametrize("api_base,warned", [("http://127.0.0.1:8000/v1", False), ("https://u:pw@gw.example/v1", True),
                                             ("https://gw.example/v1?key=abc", True)])
def test_the_resume_hint_warns_of_a_dropped_api_base_secret_only_when_there_was_one(api_base, warned, tmp_path):
    spec = {"run_config": {"command": f"oaieval econarena/chat:m econarena.beauty_L --completion_args api_base={api_base}"}}
    said = hint(spec, str(tmp_path / "run.jsonl"), env={})
    assert ("never repeated here" in said) is warned


def test_plan_reads_a_torn_log_and_replays_cut_off_and_errored_sessions(tmp_path):
    spec = {"eval_name": "econarena.beauty_L.dev.v0", "completion_fns": ["p"],
            "run_config": {"eval_spec": {"args": {"game": "beauty"}}, "seed": 1}}
    rows = [{"spec": spec}]

    def scored(i, r):  # a real run event: the resume derives a session's figures from its runs
        outcome = score_run([10.0, 20.0, 30.0, 40.0, 50.0], 60, 100.0, ["p"] * 5)
        return run_event(outcome, cell="beauty_L", session=i, run=r, runs=2, history_runs=0,
                         game_params={"c_bar": 60, "prize": 100.0})

    truth = session_metrics([outcome_from_event(scored(0, r)) for r in range(2)], "p")

    def session(i, errored=False, runs=2, eas=None):
        sid = f"econarena.beauty_L.{i}"
        out = [{"type": "sampling", "sample_id": sid, "data": {"prompt": "x", "sampled": ["y"]}}]
        out += [{"type": "econarena_run", "sample_id": sid, "data": scored(i, r)} for r in range(runs)]
        if runs == 2:
            out.append({"type": "econarena_session", "sample_id": sid,
                        "data": {"session": i, "errored": errored,
                                 **{m: None if errored else truth[m] for m in METRICS},
                                 **({"eas": eas} if eas is not None else {})}})
        return out

    for row in session(0) + session(1, errored=True) + session(2, runs=1) + session(3, eas=0.999):
        rows.append(row)
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in rows) + '\n{"type": "sampling", "sam')
    p = resumption(str(log), spec, runs=2, players=["p"])
    assert sorted(p.done) == [0, 3] and p.replay == [1, 2] and p.torn_lines == 1
    assert p.done[0].sample_id == "econarena.beauty_L.0"
    assert [t for t, _ in p.done[0].events] == ["sampling", "econarena_run", "econarena_run", "econarena_session"]
    assert all(d.get("resumed_from") == str(log.resolve()) for t, d in p.done[0].events if t != "sampling")
    assert "resumed_from" not in p.done[0].events[0][1]
    # a logged figure the runs do not give is named, and the copy carries the derived one
    assert p.forged == ["session 3"] and p.done[3].result == {"p": truth}
    assert p.done[3].events[-1][1]["eas"] == truth["eas"] != 0.999
    with pytest.raises(ResumeRefused, match="seed: 1 vs 2"):
        resumption(str(log), {**spec, "run_config": {**spec["run_config"], "seed": 2}}, runs=2, players=["p"])
    with pytest.raises(ResumeRefused, match="own --record_path"):
        resumption(str(log), spec, runs=2, players=["p"], own_log=str(log))
    assert os.path.exists(log)
    # a directory: logs of other conditions are passed over, not refused; none at all plays everything
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"spec": {**spec, "eval_name": "econarena.beauty_M.dev.v0"}}) + "\n")
    assert sorted(resumption(str(tmp_path), spec, runs=2, players=["p"]).done) == [0, 3]
    assert resumption(str(tmp_path), spec, runs=2, players=["p"], own_log=str(log)).done == {}


def test_the_batch_map_counts_each_line_s_purchases_across_resumes_and_shrugs_off_bad_counts():
    """What ``calls.batches`` caps a line's purchases by (twice, ever): the records' counts, carried
    by a re-attach into the next log; an old log's records without counts are counted; junk is not trusted."""
    def event(status: str, ids: list, **data: object) -> dict:
        return {"type": "econarena_batch", "data": {"status": status, "custom_ids": ids, **data}}

    old = sent_in_batches([event("uploaded", ["a", "b"], input_file_id="f1"),
                           event("submitted", ["a", "b"], input_file_id="f1", batch_id="b1"),
                           event("submitted", ["a"], input_file_id="f2", batch_id="b2")])
    assert (old["a"]["bought"], old["b"]["bought"]) == (2, 1) and old["a"]["batches"] == ["b1", "b2"]
    new = sent_in_batches([event("attached", ["a", "b"], batch_id="b2", bought=[2, 1], earlier=["b1"]),
                           event("submitted", ["b"], input_file_id="f3", batch_id="b3", bought=[2])])
    assert new["a"] == {"batch_id": "b2", "bought": 2, "batches": ["b1", "b2"]}
    assert new["b"] == {"batch_id": "b3", "input_file_id": "f3", "bought": 2, "batches": ["b1", "b2", "b3"]}
    junk = sent_in_batches([event("submitted", ["a", "b", "c"], batch_id="b1", bought=[True, "9", 10**12]),
                            event("attached", ["a"], batch_id="b1", bought=[0, 1], earlier=[{"x": 1}, "b" * 999]),
                            event("submitted", ["d"], batch_id="b2", bought={"d": 1})])
    assert [junk[c]["bought"] for c in "abcd"] == [1, 1, 1, 1]
    assert junk["a"]["batches"] == ["b1", "b" * 200]  # a name is bounded, a name of the wrong type dropped
