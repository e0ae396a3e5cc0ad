"""Batch mode (``econarena/chat`` ``batch=yes``) through the real ``oaieval`` and a real Batch API.

The server on 127.0.0.1 (tests/openai_server.py) implements OpenAI's Files and Batches endpoints and
answers each batch line by the very code that answers a synchronous request with that body, so a
batch run and a synchronous run get the same replies and must score the same, byte for byte. It
counts synchronous chat requests apart from batch lines: batch mode sends none.
"""
from __future__ import annotations

import collections
import json
import shlex
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Optional

import pytest

from econarena_evals.log.evallog import read_log
from econarena_evals.log.filing import filing_problems
from econarena_evals.log.format import BATCH_EVENT, SEAT_TAG

from conftest import ERRORED, REGISTRY, TEST_REGISTRY, base_env, cli, run_cli
from openai_server import BatchBehaviour, OpenAIServer, api_error
from policies import scripted

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

FN = "econarena/chat:gpt-4o"
BATCH_ARGS = "batch=yes,batch_poll_s=0.1"
TERMINATED = 143  # SIGTERM's exit status (econarena_evals.integration.status)


def env_for(server: OpenAIServer) -> dict[str, str]:
    return base_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-local"}


def command(cell: str, log: Path, sessions: int, completion_args: Optional[str] = BATCH_ARGS) -> list[str]:
    args = [cli("oaieval"), FN, f"econarena.{cell}", "--registry_path", str(REGISTRY), "--record_path", str(log),
            "--max_samples", str(sessions)]
    return args + (["--completion_args", completion_args] if completion_args else [])


def rows(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def sessions_of(log: Path) -> dict[int, dict[str, Any]]:
    """Each session's event, less what only says how it was played."""
    return {r["data"]["session"]: {k: v for k, v in r["data"].items() if k != "reused_calls"}
            for r in rows(log) if r.get("type") == "econarena_session"}


def synchronous(cell: str, sessions: int, tmp_path: Path) -> Path:
    server = OpenAIServer(scripted, models=("gpt-4o",)).start()
    try:
        log = tmp_path / f"{cell}.sync.jsonl"
        run_cli(command(cell, log, sessions, completion_args=None), env_for(server), timeout=600)
    finally:
        server.stop()
    return log


def check_batched_log(log: Path, server: OpenAIServer) -> None:
    """Every seat call answered by a batch the server made, filed under its own session."""
    assert filing_problems(log) == []
    made = {b["id"]: set(b["custom_ids"]) for b in server.batch.created}
    sampling = [r for r in rows(log) if r.get("type") == "sampling"]
    for r in sampling:
        tag, batch_id = r["data"][SEAT_TAG], r["data"]["batch_id"]
        # the custom_id names the seat call; the session's sample id holds its answer
        prefix = f"econarena.{tag['cell']}.{tag['session']}/run{tag['run']}/seat{tag['seat']}/"
        assert any(c.startswith(prefix) for c in made[batch_id]), (prefix, batch_id)
        assert r["sample_id"].endswith(f".{tag['session']}")


@pytest.mark.parametrize("cell,batches", [("beauty_L", 1), ("beauty_hist", 10)])
def test_a_whole_dev_cell_goes_by_batch_and_scores_as_the_synchronous_run(cell, batches, tmp_path):
    """beauty_L: every call of every session in one batch; beauty_hist: one batch per run wave."""
    server = OpenAIServer(scripted, models=("gpt-4o",), batch=BatchBehaviour(validate_s=0.2, run_s=0.3)).start()
    try:
        log = tmp_path / f"{cell}.jsonl"
        done = run_cli(command(cell, log, 20), env_for(server), timeout=600)
    finally:
        server.stop()
    assert server.sync_chat_requests() == 0
    assert len(server.batch.created) == batches
    assert [len(b["custom_ids"]) for b in server.batch.created] == [1000 // batches] * batches
    assert server.batch.lines_answered == 1000
    report = read_log(log).final_report
    assert report["sessions"] == 20 and report["errored_sessions"] == 0
    sync = synchronous(cell, 20, tmp_path)
    assert json.dumps(report, sort_keys=True) == json.dumps(read_log(sync).final_report, sort_keys=True)
    assert sessions_of(log) == sessions_of(sync)  # session by session, not only in total
    check_batched_log(log, server)
    said = done.stderr
    assert "validating" in said and "completed, " in said  # the wait is visible
    assert f"by batch: {batches} batch(es) in {batches} wave(s)" in said
    events = [r["data"] for r in rows(log) if r.get("type") == BATCH_EVENT]
    assert [e["status"] for e in events][:3] == ["uploaded", "submitted", "completed"]
    # what it cost: every call went by batch, so at the discount given, half of the full price
    costs = []
    for discount in ([], ["--batch-discount", "0.5"]):
        out = tmp_path / f"report{len(discount)}"
        run_cli([cli("econarena-report"), str(log), "--out", str(out), "--price-in", "2", "--price-out", "8",
                 *discount], env_for(server))
        tokens = json.loads((out / "report.json").read_text())["tokens"]
        assert tokens["total"]["batch_calls"] == tokens["total"]["seat_calls"] == 1000
        costs.append(tokens["total"]["cost"])
    assert costs[1] == pytest.approx(costs[0] / 2) and costs[0] > 0


def stop_during_the_wait(cell: str, sessions: int, at_batch: int, tmp_path: Path) -> dict[str, Any]:
    """SIGTERM once batch ``at_batch`` (1-based) is submitted and held in progress, then release it
    and run the resume command the run printed."""
    hold = threading.Event()
    server = OpenAIServer(scripted, models=("gpt-4o",), batch=BatchBehaviour(run_s=0.1)).start()
    try:
        env = env_for(server)
        first = tmp_path / "first.jsonl"
        proc = subprocess.Popen(command(cell, first, sessions), env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while len(server.batch.created) < at_batch - 1 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        server.batch.behaviour = BatchBehaviour(hold=hold)  # the next batch stays in progress
        while len(server.batch.created) < at_batch and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        time.sleep(0.3)  # the run is waiting on it
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        submitted_before = len(server.batch.created)
        summary = subprocess.run([cli("econarena-summary"), str(first)], env=env, capture_output=True, text=True)
        hold.set()  # the batch ends while nobody waits for it
        server.batch.behaviour = BatchBehaviour(run_s=0.1)
        line = next(x for x in err.splitlines() if "resume_from=" in x).strip()
        resumed = subprocess.run(["bash", "-c", line], env=env, capture_output=True, text=True, timeout=600)
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        second = Path(shlex.split(line)[shlex.split(line).index("--record_path") + 1])
    finally:
        server.stop()
    return {"status": proc.returncode, "stderr": err, "resumed": resumed.stderr, "second": second,
            "summary": summary.stdout,
            "submitted_before": submitted_before, "server": server}


@pytest.mark.parametrize("cell,at_batch,batches", [("beauty_L", 1, 1), ("beauty_hist", 3, 10)])
def test_killed_during_the_wait_the_resume_takes_the_batch_and_pays_nothing_twice(cell, at_batch, batches, tmp_path):
    out = stop_during_the_wait(cell, 4, at_batch, tmp_path)
    server = out["server"]
    assert out["status"] == TERMINATED
    assert out["submitted_before"] == at_batch
    assert f"1 batch(es) go on at the provider ({server.batch.created[at_batch - 1]['id']})" in out["stderr"]
    assert "re-attached" in out["resumed"]
    # the summary lists the stopped log, with nothing answered yet in a cell without history, and its batch
    assert "batch(es) sent (a resume waits for them" in out["summary"] and "resume_from=" in out["summary"]
    # no batch submitted twice, no line in two batches, and the lines answered are the calls needed
    assert len(server.batch.created) == batches
    sent = [c for b in server.batch.created for c in b["custom_ids"]]
    assert len(sent) == len(set(sent)) == 4 * 50
    assert server.batch.lines_answered == 4 * 50
    assert server.sync_chat_requests() == 0
    report = read_log(out["second"]).final_report
    assert report["sessions"] == 4 and report["errored_sessions"] == 0
    check_batched_log(out["second"], server)


@pytest.mark.parametrize("end", ["expired", "cancelled"])
def test_an_expired_or_cancelled_batch_keeps_what_it_answered_and_sends_the_rest_in_a_new_batch(end, tmp_path):
    """Expired: its window passed; cancelled: by someone else (the dashboard, another script)."""
    first_ends = BatchBehaviour(outcome=lambda n: end if n == 0 else "completed", stop_after=120)
    server = OpenAIServer(scripted, models=("gpt-4o",), batch=first_ends).start()
    try:
        log = tmp_path / f"{end}.jsonl"
        done = run_cli(command("beauty_L", log, 4), env_for(server), timeout=300)
    finally:
        server.stop()
    first, second = server.batch.created
    assert len(first["custom_ids"]) == 200 and len(second["custom_ids"]) == 80
    assert set(second["custom_ids"]) < set(first["custom_ids"])
    assert server.sync_chat_requests() == 0
    assert read_log(log).final_report["sessions"] == 4
    assert f"{end}, 120 of 200 done" in done.stderr and "sending them again in a new batch" in done.stderr
    check_batched_log(log, server)


def test_lines_that_fail_are_retried_and_a_line_the_api_refuses_errors_only_its_session(tmp_path):
    failed_once: set[str] = set()
    refused: list[str] = []  # the session whose run 3 seat 4 the API refuses: the first one it sees

    def line_error(custom_id: str, body: dict[str, Any]) -> Optional[tuple[int, dict[str, Any]]]:
        if "/run0/seat2/" in custom_id and custom_id not in failed_once:
            failed_once.add(custom_id)  # a server error, once: the next batch answers it
            return 500, api_error("The server had an error", kind="server_error")
        if "/run3/seat4/" in custom_id and (not refused or custom_id.startswith(refused[0])):
            refused[:1] = [custom_id.split("/")[0] + "/"]
            return 400, api_error("Invalid 'messages': too long", param="messages")
        return None

    server = OpenAIServer(scripted, models=("gpt-4o",), batch=BatchBehaviour(line_error=line_error)).start()
    try:
        log = tmp_path / "lines.jsonl"
        done = run_cli(command("beauty_L", log, 4), env_for(server), timeout=300, returncode=ERRORED)
    finally:
        server.stop()
    assert len(failed_once) == 4  # seat 2 of run 0 of each session failed once
    assert [len(b["custom_ids"]) for b in server.batch.created] == [200, 4]
    sessions = sessions_of(log)
    bad = int(refused[0].rstrip("/").rsplit(".", 1)[1])
    assert [i for i, s in sorted(sessions.items()) if s["errored"]] == [bad]
    assert "HTTP 400" in sessions[bad]["error"] and "too long" in sessions[bad]["error"]
    assert read_log(log).final_report["sessions"] == 3
    assert "1 of 4 session(s)" in done.stderr


@pytest.mark.parametrize("fallback", [False, True])
def test_a_batch_that_fails_validation_errors_the_sessions_unless_the_calls_may_go_synchronously(fallback, tmp_path):
    server = OpenAIServer(scripted, models=("gpt-4o",), batch=BatchBehaviour(outcome=lambda n: "failed")).start()
    try:
        log = tmp_path / "failed.jsonl"
        args = BATCH_ARGS + (",batch_fallback=yes" if fallback else "")
        run_cli(command("beauty_L", log, 2, args) + ["--extra_eval_params", "max_attempts=2"], env_for(server),
                timeout=300, returncode=0 if fallback else ERRORED)
    finally:
        server.stop()
    assert len(server.batch.created) == 2  # max_attempts batches, then no more
    report = read_log(log).final_report
    if fallback:
        assert server.sync_chat_requests() == 100 and report["sessions"] == 2
        assert filing_problems(log) == []
    else:
        assert server.sync_chat_requests() == 0 and report["errored_sessions"] == 2
        assert all("failed" in s["error"] for s in sessions_of(log).values())


def test_an_endpoint_without_a_batch_api_stops_the_run_in_one_line(tmp_path):
    """A local server (llama.cpp, Ollama) has no /v1/files: the first upload says so, exit 4."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[str] = []

    class NoBatches(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            seen.append(self.path)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = b'{"error": {"message": "File Not Found", "type": "not_found_error"}}'
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), NoBatches)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        env = base_env() | {"OPENAI_BASE_URL": f"http://127.0.0.1:{httpd.server_port}/v1", "OPENAI_API_KEY": "sk-x"}
        done = run_cli(command("beauty_L", tmp_path / "none.jsonl", 2), env, timeout=120, returncode=4)
    finally:
        httpd.shutdown()
    assert seen == ["/v1/files"]  # one upload, not retried, and no seat call sent synchronously
    stopped = [x for x in done.stderr.splitlines() if x.startswith("econarena: stopped:")]
    assert len(stopped) == 1 and "this endpoint has no batch API" in stopped[0] and "HTTP 404" in stopped[0]


def test_the_same_econarena_run_after_a_stop_during_the_wait_takes_the_batch_and_sends_nothing_twice(tmp_path):
    """A cell without history has nothing answered until its one batch ends: its log still holds
    the batch, so running the set's command again resumes it instead of writing the log anew."""
    hold = threading.Event()
    server = OpenAIServer(scripted, models=("gpt-4o",), batch=BatchBehaviour(hold=hold)).start()
    env = env_for(server)
    command = [cli("econarena-run"), FN, "econarena-two-hist", "--out", str(tmp_path / "runs"), "--registry_path",
               str(REGISTRY), "--registry_path", str(TEST_REGISTRY), "--max_samples", "1", "--completion_args",
               BATCH_ARGS]
    try:
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not server.batch.created and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=120)
        hold.set()
        server.batch.behaviour = BatchBehaviour()
        again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    finally:
        server.stop()
    assert proc.returncode == TERMINATED
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resuming from it" in again.stderr and "re-attached" in again.stderr
    sent = [c for b in server.batch.created for c in b["custom_ids"]]
    assert len(server.batch.created) == 11 and len(sent) == len(set(sent)) == 2 * 50  # beauty_L 1 + beauty_hist 10
    assert server.sync_chat_requests() == 0


def test_an_arena_of_two_models_in_batch_mode_sends_a_batch_per_model_side_by_side(tmp_path):
    hold = threading.Event()  # both batches stay in progress until the second one exists
    server = OpenAIServer(scripted, models=("gpt-4o", "gpt-4o-mini"), batch=BatchBehaviour(hold=hold)).start()
    try:
        log = tmp_path / "arena.jsonl"
        proc = subprocess.Popen([cli("oaieval"), f"{FN},econarena/chat:gpt-4o-mini", "econarena.beauty_L",
                                 "--registry_path", str(REGISTRY), "--record_path", str(log), "--max_samples", "2",
                                 "--completion_args", BATCH_ARGS], env=env_for(server),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while len(server.batch.created) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        both_waiting = len(server.batch.created)  # the second was sent while the first still waited
        hold.set()
        _, err = proc.communicate(timeout=300)
    finally:
        hold.set()
        server.stop()
    assert proc.returncode == 0, err[-3000:]
    assert both_waiting == 2
    models = [{body["model"] for body in b["bodies"]} for b in server.batch.created]
    assert sorted(m.pop() for m in models if len(m) == 1) == ["gpt-4o", "gpt-4o-mini"]  # one model a batch
    assert sum(len(b["custom_ids"]) for b in server.batch.created) == 2 * 50
    assert read_log(log).final_report["sessions"] == 2
    check_batched_log(log, server)


# ---- the batch API's own failures: waited out, never a line paid twice ----


def storm_run(tmp_path: Path, setup, sessions: int = 4, timeout: float = 300, returncode: int = 0):
    """beauty_L, ``sessions`` sessions (50 calls each) by batch against a server that ``setup`` makes misbehave."""
    server = OpenAIServer(scripted, models=("gpt-4o",), batch=BatchBehaviour(validate_s=0.2, run_s=0.3)).start()
    setup(server)
    try:
        log = tmp_path / "storm.jsonl"
        done = run_cli(command("beauty_L", log, sessions), env_for(server), timeout=timeout, returncode=returncode)
    finally:
        server.stop()
    return server, log, done


def test_the_batch_status_endpoint_down_for_10_s_pays_nothing_twice(tmp_path):
    down: dict[str, float] = {}

    def fault(method: str, path: str):
        if method == "GET" and "/batches/" in path:
            down.setdefault("from", time.monotonic())
            if time.monotonic() - down["from"] < 10.0:
                return 503, api_error("The server is temporarily unavailable", kind="server_error")
        return None

    server, log, done = storm_run(tmp_path, lambda s: setattr(s.batch, "fault", fault))
    assert server.batch.faulted["GET batches/id"] >= 3  # the looks during the outage were refused
    assert len(server.batch.created) == 1 and server.batch.lines_answered == 200  # 0 lines paid twice
    assert server.sync_chat_requests() == 0
    assert all(not s["errored"] for s in sessions_of(log).values()) and len(sessions_of(log)) == 4
    assert "asking again with backoff while the batch's window lasts" in done.stderr
    check_batched_log(log, server)


def test_a_batch_object_with_fields_of_the_wrong_type_is_read_and_named_once(tmp_path):
    def mangle(view: dict[str, Any]) -> dict[str, Any]:
        return {**view, "errors": {"object": "list", "data": ["a gateway's note, not an error object"]},
                "request_counts": {**view["request_counts"], "total": "two hundred"}}

    server, log, done = storm_run(tmp_path, lambda s: setattr(s.batch, "mangle", mangle))
    assert len(server.batch.created) == 1 and server.batch.lines_answered == 200
    assert all(not s["errored"] for s in sessions_of(log).values()) and len(sessions_of(log)) == 4
    named = [x for x in done.stderr.splitlines() if "request_counts.total is str" in x]
    assert len(named) == 1 and "ignored" in named[0]
    check_batched_log(log, server)


def test_an_output_file_that_404s_is_sent_again_once_and_the_user_told_it_was_paid(tmp_path):
    gone: set[str] = set()

    def fault(method: str, path: str):
        if method == "GET" and path.endswith("/content") and not gone - {path}:
            if not gone:  # the first batch's output file: gone once read for
                gone.add(path)
            if path in gone:
                return 404, api_error("No such File object", param="id")
        return None

    server, log, done = storm_run(tmp_path, lambda s: setattr(s.batch, "fault", fault))
    assert [len(b["custom_ids"]) for b in server.batch.created] == [200, 200]
    assert all(not s["errored"] for s in sessions_of(log).values()) and len(sessions_of(log)) == 4
    said = [x for x in done.stderr.splitlines() if "cannot be read" in x]
    assert len(said) == 1 and "200 answered call(s) were paid, and are sent again in a new batch only if" in said[0]
    check_batched_log(log, server)


def test_output_files_never_readable_buy_each_line_twice_at_most_and_the_resumes_buy_none(tmp_path):
    """Every output file answers 404: each line is bought twice, then the run stops (exit 4) naming
    the batches; the printed resume asks those batches again and buys nothing, stopping with the same
    line; once the files read again, the next resume takes the answers from the recorded batch."""
    never = [True]

    def unreadable(method: str, path: str):
        if never[0] and method == "GET" and path.endswith("/content"):
            return 404, api_error("No such File object", param="id")
        return None

    server = OpenAIServer(scripted, models=("gpt-4o",), batch=BatchBehaviour(validate_s=0.1, run_s=0.1)).start()
    server.batch.fault = unreadable
    env, log = env_for(server), tmp_path / "never.jsonl"
    try:
        first = run_cli(command("beauty_L", log, 4), env, timeout=300, returncode=4)
        bought_first = [c for b in server.batch.created for c in b["custom_ids"]]
        resume = next(x for x in first.stderr.splitlines() if "resume_from=" in x).strip()
        again = subprocess.run(["bash", "-c", resume], env=env, capture_output=True, text=True, timeout=300)
        bought_again = [c for b in server.batch.created for c in b["custom_ids"]]
        never[0] = False  # the provider's files read again: the next resume takes what was bought
        second = Path(shlex.split(resume)[shlex.split(resume).index("--record_path") + 1])
        resume2 = next(x for x in again.stderr.splitlines() if "resume_from=" in x).strip()
        last = subprocess.run(["bash", "-c", resume2], env=env, capture_output=True, text=True, timeout=300)
    finally:
        server.stop()
    counted = collections.Counter(bought_first)
    assert len(counted) == 200 and set(counted.values()) == {2}  # bought twice each, no more
    assert server.batch.lines_answered == 400
    stopped = [x for x in first.stderr.splitlines() if x.startswith("econarena: stopped:")]
    assert len(stopped) == 1 and "batch output unreadable: 200 call(s) were bought 2 times" in stopped[0]
    assert [b["id"] for b in server.batch.created] == ["batch_000001", "batch_000002"]
    assert "batch_000001 and batch_000002 (200 line(s))" in stopped[0]  # what it bought and could not read
    assert again.returncode == 4, again.stderr[-3000:]
    assert bought_again == bought_first  # the resume bought none of them again
    reason = stopped[0].split(" synchronously.")[0]  # then what is kept where, which names the log
    assert [x.split(" synchronously.")[0] for x in again.stderr.splitlines()
            if x.startswith("econarena: stopped:")] == [reason]
    assert "re-attached" in again.stderr
    assert last.returncode == 0, last.stderr[-3000:]
    assert [c for b in server.batch.created for c in b["custom_ids"]] == bought_first  # nor the last one
    assert server.sync_chat_requests() == 0 and server.batch.lines_answered == 400
    third = Path(shlex.split(resume2)[shlex.split(resume2).index("--record_path") + 1])
    report = read_log(third).final_report
    assert report["sessions"] == 4 and report["errored_sessions"] == 0
    assert second != third


def test_output_files_never_readable_go_synchronously_when_the_user_allows_it(tmp_path):
    def unreadable(method: str, path: str):
        if method == "GET" and path.endswith("/content"):
            return 404, api_error("No such File object", param="id")
        return None

    server = OpenAIServer(scripted, models=("gpt-4o",), batch=BatchBehaviour(validate_s=0.1, run_s=0.1)).start()
    server.batch.fault = unreadable
    try:
        log = tmp_path / "fallback.jsonl"
        done = run_cli(command("beauty_L", log, 2, BATCH_ARGS + ",batch_fallback=yes"), env_for(server), timeout=300)
    finally:
        server.stop()
    counted = collections.Counter(c for b in server.batch.created for c in b["custom_ids"])
    assert len(counted) == 100 and set(counted.values()) == {2}
    assert server.sync_chat_requests() == 100  # each call once more, live
    assert read_log(log).final_report["sessions"] == 2 and read_log(log).final_report["errored_sessions"] == 0
    assert "go synchronously (batch_fallback=yes)" in done.stderr


def test_an_output_file_holding_each_line_twice_is_answered_by_the_first_and_says_so(tmp_path):
    def twice(which: str, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if which != "output":
            return lines
        spoiled = [{**line, "response": {**line["response"], "body": {
            **line["response"]["body"], "choices": [{**line["response"]["body"]["choices"][0], "message": {
                "role": "assistant", "content": '{"choice": 0}'}}]}}} for line in lines]
        return lines + spoiled  # the second line of each custom_id would answer 0 for every call

    server, log, done = storm_run(tmp_path, lambda s: setattr(s.batch, "written", twice))
    sync_log = synchronous("beauty_L", 4, tmp_path)
    assert sessions_of(log) == sessions_of(sync_log)  # the first line of each answered, as a request would
    said = [x for x in done.stderr.splitlines() if "more than once" in x]
    assert len(said) == 1 and "answers 200 call(s) more than once" in said[0]
