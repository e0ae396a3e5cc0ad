"""The batch engine (``calls.batches``) against an API kept in memory: waves, retries, re-attaching.

The API here is a plain object with the five methods of ``BatchAPI``; what goes over HTTP to a real
Files and Batches server is tested end to end in tests/run/test_batch_mode.py.
"""
from __future__ import annotations

import json
import threading
import time
from typing import Any, Optional

from econarena_evals.calls import batches
from econarena_evals.calls.batches import Answer, BatchRounds, Line, LineFailed, Status, chunks, read_results
from econarena_evals.calls.policy import CallPolicy
from econarena_evals.calls.state import CallState

ENDPOINT = "/v1/chat/completions"


class MemoryAPI:
    """Answers every line with its custom_id, unless ``outcomes`` says otherwise for the n-th batch."""

    label = "memory"

    def __init__(self, outcomes: Optional[dict[int, str]] = None, line_status: Optional[dict[str, int]] = None,
                 expire_after: int = 0) -> None:
        self.outcomes, self.line_status, self.expire_after = outcomes or {}, line_status or {}, expire_after
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.log: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def upload(self, data: bytes) -> str:
        with self.lock:
            file_id = f"file-{len(self.files)}"
            self.files[file_id] = data
            self.log.append(("upload", file_id))
            return file_id

    def create(self, file_id: str, metadata: Any) -> str:
        with self.lock:
            batch_id = f"batch_{len(self.batches)}"
            lines = [json.loads(raw) for raw in self.files[file_id].splitlines()]
            self.batches[batch_id] = {"file": file_id, "lines": lines, "n": len(self.batches)}
            self.log.append(("create", batch_id))
            return batch_id

    def retrieve(self, batch_id: str) -> Status:
        self.log.append(("retrieve", batch_id))
        batch = self.batches[batch_id]
        outcome = self.outcomes.get(batch["n"], "completed")
        out, err = [], []
        for i, line in enumerate(batch["lines"]):
            cid = line["custom_id"]
            if outcome == "expired" and i >= self.expire_after:
                err.append({"custom_id": cid, "response": None,
                            "error": {"code": "batch_expired", "message": "not run in the window"}})
            elif cid in self.line_status:
                err.append({"custom_id": cid, "response": {"status_code": self.line_status[cid],
                                                           "body": {"error": {"message": "refused"}}}, "error": None})
            elif outcome in ("completed", "expired"):
                out.append({"custom_id": cid, "response": {"status_code": 200, "body": {"echo": cid}}, "error": None})
        self.files[f"{batch_id}-out"] = "".join(json.dumps(r) + "\n" for r in out).encode()
        self.files[f"{batch_id}-err"] = "".join(json.dumps(r) + "\n" for r in err).encode()
        return Status(batch_id, outcome, len(batch["lines"]), len(out), len(err),
                      f"{batch_id}-out" if out else None, f"{batch_id}-err" if err else None,
                      "line 1: bad" if outcome == "failed" else "")

    def download(self, file_id: str) -> bytes:
        return self.files[file_id]

    def find(self, file_id: str) -> Optional[str]:
        return next((b for b, v in self.batches.items() if v["file"] == file_id), None)


def waves(sessions: int, records: list, **kw: Any) -> BatchRounds:
    policy = CallPolicy(max_attempts=kw.pop("max_attempts", 3), backoff_base_s=0.0)
    return BatchRounds(CallState(policy), sessions, 0.01, ENDPOINT, records.append, lambda line: None, **kw)


def play(w: BatchRounds, api: MemoryAPI, sessions: dict[str, list[str]]) -> dict[str, list[Any]]:
    """Each session (a thread) puts its lines in the wave and waits, then leaves."""
    results: dict[str, list[Any]] = {}

    def session(name: str, ids: list[str]) -> None:
        w.enter()
        results[name] = w.call([(api, Line(cid, {"n": cid})) for cid in ids])
        w.leave()

    threads = [threading.Thread(target=session, args=item) for item in sessions.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    return results


def test_a_wave_of_every_session_is_one_batch_and_each_session_gets_its_own_lines():
    api, records = MemoryAPI(), []
    w = waves(3, records, linger_s=30)  # no linger: only the barrier can close the wave
    results = play(w, api, {f"s{i}": [f"s{i}/{j}" for j in range(4)] for i in range(3)})
    assert [kind for kind, _ in api.log if kind == "create"] == ["create"]
    for name, got in results.items():
        assert [r.body["echo"] for r in got] == [f"{name}/{j}" for j in range(4)]
        assert all(isinstance(r, Answer) and r.batch_id == "batch_0" for r in got)
    # the input file, then the batch, are in the log before the first look at the batch
    assert [r["status"] for r in records] == ["uploaded", "submitted", "completed"]
    assert records[0]["input_file_id"] == "file-0" and records[1]["batch_id"] == "batch_0"
    assert sorted(records[1]["custom_ids"]) == sorted(f"s{i}/{j}" for i in range(3) for j in range(4))
    assert api.log.index(("create", "batch_0")) < api.log.index(("retrieve", "batch_0"))
    assert w.answered == 12  # what the progress line counts


def test_a_session_that_is_done_does_not_hold_the_wave():
    api, records = MemoryAPI(), []
    w = waves(2, records, linger_s=30)
    w.leave()  # the other session errored before it had any call
    got = w.call([(api, Line("a", {}))])
    assert got[0].body == {"echo": "a"}


def test_a_session_busy_elsewhere_is_waited_for_but_one_not_started_is_not():
    api, records = MemoryAPI(), []
    w = waves(3, records, linger_s=0.2)
    got: dict[str, Any] = {}

    def busy() -> None:
        w.enter()
        time.sleep(0.8)  # four lingers: scoring, or a synchronous opponent's calls
        got["busy"] = w.call([(api, Line("b", {}))])
        w.leave()

    thread = threading.Thread(target=busy)
    w.enter()
    thread.start()
    got["first"] = w.call([(api, Line("a", {}))])  # the third session never starts: one thread each
    thread.join(10)
    assert got["first"][0].batch_id == got["busy"][0].batch_id == "batch_0"
    assert len(api.batches) == 1
    # the third session starts only now, once the first is done and frees its thread
    w.leave()
    w.enter()
    assert w.call([(api, Line("c", {}))])[0].batch_id == "batch_1"


def test_an_expired_batch_keeps_its_answers_and_sends_the_rest_again():
    api, records = MemoryAPI(outcomes={0: "expired"}, expire_after=2), []
    w = waves(1, records)
    got = w.call([(api, Line(c, {})) for c in "abcd"])
    assert [r.batch_id for r in got] == ["batch_0", "batch_0", "batch_1", "batch_1"]
    second = api.batches["batch_1"]["lines"]
    assert [line["custom_id"] for line in second] == ["c", "d"]  # nothing answered is paid twice


def test_a_line_refused_with_400_is_not_sent_again_and_a_500_is_within_max_attempts():
    api, records = MemoryAPI(line_status={"bad": 400, "flaky": 500}), []
    w = waves(1, records, max_attempts=3)
    got = dict(zip(["ok", "bad", "flaky"], w.call([(api, Line(c, {})) for c in ("ok", "bad", "flaky")])))
    assert isinstance(got["ok"], Answer)
    assert isinstance(got["bad"], LineFailed) and got["bad"].status_code == 400 and not got["bad"].transient
    assert isinstance(got["flaky"], LineFailed) and got["flaky"].status_code == 500
    sent = [line["custom_id"] for b in api.batches.values() for line in b["lines"]]
    assert sent.count("bad") == 1 and sent.count("flaky") == 3


def test_a_failed_batch_fails_its_calls_after_max_attempts_batches():
    api, records = MemoryAPI(outcomes={0: "failed", 1: "failed"}), []
    got = waves(1, records, max_attempts=2).call([(api, Line("a", {}))])
    assert isinstance(got[0], LineFailed) and "failed: line 1: bad" in str(got[0])
    assert len(api.batches) == 2


def test_lines_already_in_a_batch_are_waited_for_there_not_sent_again():
    api, records = MemoryAPI(), []
    api.upload(b'{"custom_id": "a", "body": {}}\n{"custom_id": "b", "body": {}}\n')
    api.create("file-0", {})
    api.upload(b'{"custom_id": "c", "body": {}}\n')  # uploaded; the run died before the batch was recorded
    api.create("file-1", {})
    adopted = {"a": {"batch_id": "batch_0"}, "b": {"batch_id": "batch_0"}, "c": {"input_file_id": "file-1"}}
    got = waves(1, records, adopted=adopted).call([(api, Line(c, {})) for c in "abcd"])
    assert [r.batch_id for r in got] == ["batch_0", "batch_0", "batch_1", "batch_2"]
    assert [line["custom_id"] for line in api.batches["batch_2"]["lines"]] == ["d"]
    attached = [r for r in records if r["status"] == "attached"]
    assert {r["batch_id"]: sorted(r["custom_ids"]) for r in attached} == {"batch_0": ["a", "b"], "batch_1": ["c"]}


def test_a_batch_this_endpoint_does_not_know_is_sent_anew_and_a_line_it_refused_is_tried_again():
    class NotFound(Exception):
        status_code = 404

    class Forgetful(MemoryAPI):
        def retrieve(self, batch_id: str) -> Status:
            if batch_id == "batch_gone":
                raise NotFound("No batch found with id 'batch_gone'.")
            # the earlier run's batch refused line r; this time the endpoint takes it
            self.line_status = {"r": 400} if batch_id == "batch_0" else {}
            return super().retrieve(batch_id)

    api, records = Forgetful(), []
    api.upload(b'{"custom_id": "r", "body": {}}\n')
    api.create("file-0", {})
    adopted = {"g": {"batch_id": "batch_gone"}, "r": {"batch_id": "batch_0"}}
    got = waves(1, records, adopted=adopted).call([(api, Line(c, {})) for c in "gr"])
    assert all(isinstance(r, Answer) for r in got)
    assert [line["custom_id"] for line in api.batches["batch_1"]["lines"]] == ["g", "r"]  # one new batch for both
    assert len(api.batches) == 2


def test_stopping_the_run_stops_the_wait_not_the_batch():
    class Endless(MemoryAPI):
        def retrieve(self, batch_id: str) -> Status:
            self.log.append(("retrieve", batch_id))
            return Status(batch_id, "in_progress", 1)

    api, records = Endless(), []
    w = waves(1, records)
    threading.Timer(0.3, w.call_state.stop, args=("interrupted (SIGTERM)", "interrupted")).start()
    got = w.call([(api, Line("a", {}))])
    assert type(got[0]).__name__ == "RunStopped"
    assert [r["status"] for r in records] == ["uploaded", "submitted"]  # no cancel, no end: the resume takes it


def test_a_batch_that_never_ends_is_given_up_on_past_the_window_and_its_calls_sent_anew(monkeypatch):
    class Stuck(MemoryAPI):
        def retrieve(self, batch_id: str) -> Status:
            if batch_id == "batch_0":
                self.log.append(("retrieve", batch_id))
                return Status(batch_id, "in_progress", 1)
            return super().retrieve(batch_id)

    monkeypatch.setattr(batches, "OVERDUE_S", 0.2)
    api, records = Stuck(), []
    got = waves(1, records).call([(api, Line("a", {}))])
    assert got[0].batch_id == "batch_1"


def test_chunks_keep_within_the_lines_limit(monkeypatch):
    monkeypatch.setattr(batches, "MAX_LINES", 3)
    cuts = chunks([Line(str(i), {}) for i in range(7)], ENDPOINT)
    assert [list(c) for c in cuts] == [[0, 1, 2], [3, 4, 5], [6]]


def test_results_read_answers_errors_and_skip_lines_that_name_no_call():
    data = (b'{"custom_id": "a", "response": {"status_code": 200, "body": {"x": 1}}, "error": null}\n'
            b'{"custom_id": "b", "response": {"status_code": 429, "body": {"error": {"message": "slow"}}}}\n'
            b'{"custom_id": "c", "response": null, "error": {"code": "batch_expired", "message": "late"}}\n'
            b'not json\n{"response": {}}\n')
    got = read_results(data, "batch_9")
    assert got["a"] == Answer({"x": 1}, "batch_9")
    assert isinstance(got["b"], LineFailed) and got["b"].transient and "HTTP 429: slow" in str(got["b"])
    assert isinstance(got["c"], LineFailed) and got["c"].status_code is None and "batch_expired: late" in str(got["c"])
    assert set(got) == {"a", "b", "c"}


def test_a_status_outage_and_a_download_cut_short_are_waited_out_not_sent_again():
    class Unavailable(Exception):
        status_code = 503

    class Stormy(MemoryAPI):
        looks = downloads = 0

        def retrieve(self, batch_id: str) -> Status:
            self.looks += 1
            if self.looks <= 5:
                raise Unavailable("Service Unavailable")
            return super().retrieve(batch_id)

        def download(self, file_id: str):
            self.downloads += 1
            lines = super().download(file_id).splitlines(keepends=True)
            if self.downloads == 1:  # the first download breaks off after one line
                yield lines[0]
                raise ConnectionError("connection reset by peer")
            yield from lines

    api, records = Stormy(), []
    got = waves(1, records, max_attempts=2).call([(api, Line(c, {})) for c in "abc"])
    assert [r.batch_id for r in got] == ["batch_0"] * 3 and len(api.batches) == 1
    assert api.looks == 6 and api.downloads == 2


def test_a_malformed_batch_object_is_asked_for_again_until_it_reads():
    class Garbled(MemoryAPI):
        looks = 0

        def retrieve(self, batch_id: str) -> Status:
            self.looks += 1
            if self.looks <= 2:
                raise AttributeError("'str' object has no attribute 'message'")
            return super().retrieve(batch_id)

    api, records = Garbled(), []
    got = waves(1, records, max_attempts=1).call([(api, Line("a", {}))])
    assert isinstance(got[0], Answer) and len(api.batches) == 1


def test_a_lost_output_file_sends_its_lines_again_once():
    class NotFound(Exception):
        status_code = 404

    class Losing(MemoryAPI):
        def download(self, file_id: str) -> bytes:
            if file_id == "batch_0-out":
                raise NotFound("No such File object: batch_0-out")
            return super().download(file_id)

    said: list[str] = []
    api, records = Losing(), []
    w = BatchRounds(CallState(CallPolicy(max_attempts=3, backoff_base_s=0.0)), 1, 0.01, ENDPOINT, records.append, said.append)
    got = w.call([(api, Line(c, {})) for c in "ab"])
    assert [r.batch_id for r in got] == ["batch_1", "batch_1"]
    assert any("were paid, and are sent again in a new batch only if" in line for line in said)


def test_results_are_read_from_a_stream_of_lines_and_the_first_line_of_a_custom_id_answers_it():
    lines = iter([b'{"custom_id": "a", "response": {"status_code": 200, "body": {"x": 1}}}',
                  b'{"custom_id": "a", "response": {"status_code": 200, "body": {"x": 2}}}',
                  b'{"custom_id": "b", "response": {"status_code": "200", "body": {}}}'])
    repeated: list[str] = []
    got = read_results(lines, "batch_1", repeated)
    assert got["a"] == Answer({"x": 1}, "batch_1") and repeated == ["a"]
    assert isinstance(got["b"], LineFailed) and got["b"].status_code is None  # a status of the wrong type: not run


def test_a_create_whose_answer_was_lost_uses_the_batch_it_made():
    class Unavailable(Exception):
        status_code = 502

    class LostAnswer(MemoryAPI):
        creates = 0

        def create(self, file_id: str, metadata: Any) -> str:
            self.creates += 1
            batch_id = super().create(file_id, metadata)
            if self.creates == 1:
                raise Unavailable("Bad Gateway")  # made, but the answer never came back
            return batch_id

    api, records = LostAnswer(), []
    got = waves(1, records, max_attempts=1).call([(api, Line("a", {}))])
    assert isinstance(got[0], Answer) and got[0].batch_id == "batch_0" and len(api.batches) == 1


class Unreadable(MemoryAPI):
    """Every output file answers 404 (a provider whose output files can never be read)."""

    def download(self, file_id: str) -> bytes:
        if file_id.endswith("-out"):
            raise type("NotFound", (Exception,), {"status_code": 404})(f"No such File object: {file_id}")
        return super().download(file_id)


def test_a_line_whose_answers_cannot_be_read_is_bought_twice_at_most_then_the_run_stops_naming_the_batches():
    api, records = Unreadable(), []
    w = waves(1, records, max_attempts=4)
    got = w.call([(api, Line(c, {})) for c in "ab"])
    assert len(api.batches) == 2  # not max_attempts batches: each line is bought twice, no more
    assert all(isinstance(r, batches.RunStopped) for r in got)
    calls = w.call_state
    assert calls.stopped.is_set() and calls.stop_word == "batch output unreadable"
    assert "2 call(s) were bought 2 times" in calls.stop_reason and "batch_1 (2 line(s))" in calls.stop_reason
    submitted = [r for r in records if r["status"] == "submitted"]
    assert [r["bought"] for r in submitted] == [[1, 1], [2, 2]]  # the count goes in the log, for a resume


def test_a_resume_buys_none_of_the_lines_already_bought_twice_and_stops_at_once_naming_their_batch():
    api, records = Unreadable(), []
    api.create(api.upload(b'{"custom_id": "a"}\n{"custom_id": "b"}\n'), {})  # batch_0, the earlier run's
    adopted = {"a": {"batch_id": "batch_0", "bought": 2}, "b": {"batch_id": "batch_0", "bought": 1}}
    w = waves(1, records, max_attempts=4, adopted=adopted)
    got = w.call([(api, Line(c, {})) for c in "ab"])
    assert list(api.batches) == ["batch_0"]  # asked again, nothing bought: b waits for the next resume
    assert all(isinstance(r, batches.RunStopped) for r in got)
    reason = w.call_state.stop_reason
    assert "1 call(s) were bought 2 times" in reason and "batch_0 (1 line(s))" in reason
    attached = next(r for r in records if r["status"] == "attached")
    assert attached["bought"] == [2, 1]  # carried into this log, for the resume after


def test_lines_bought_twice_whose_answers_cannot_be_read_go_back_to_the_eval_when_it_may_call_live():
    api, records, said = Unreadable(), [], []
    api.fallback = True
    w = BatchRounds(CallState(CallPolicy(max_attempts=4, backoff_base_s=0.0)), 1, 0.01, ENDPOINT, records.append, said.append)
    got = w.call([(api, Line("a", {}))])
    assert len(api.batches) == 2 and not w.call_state.stopped.is_set()
    assert isinstance(got[0], LineFailed) and got[0].lost and got[0].transient  # the eval sends it live
    assert any("go synchronously (batch_fallback=yes)" in line for line in said)
