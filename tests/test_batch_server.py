"""The test server's Files and Batches API, driven by the official openai client over HTTP: the
shapes the client parses, the life of a batch in each of its final states, and the counts tests
read (synchronous chat requests apart from batch lines)."""
from __future__ import annotations

import json
import threading
import time
from typing import Any, Iterator

import openai
import pytest

from openai_server import BATCH_EXPIRED, BatchBehaviour, OpenAIServer, api_error

pytestmark = pytest.mark.e2e  # every test here starts a process or a server

FINAL = ("completed", "failed", "expired", "cancelled")
MAX_POLLS = 3000  # a poll every 5 ms: a batch that never ends fails the test instead of hanging it


def reply(text: str) -> str:
    return json.dumps({"choice": len(text) % 7, "echo": text[-12:]})


@pytest.fixture
def serve() -> Iterator:
    """serve(**BatchBehaviour fields) -> (server, client); every server started is stopped after."""
    started: list[OpenAIServer] = []

    def start(**behaviour: Any) -> tuple[OpenAIServer, openai.OpenAI]:
        srv = OpenAIServer(reply, models=("gpt-4", "o3"), batch=BatchBehaviour(**behaviour)).start()
        started.append(srv)
        return srv, openai.OpenAI(api_key="sk-test-local", base_url=srv.base_url, max_retries=0)

    yield start
    for srv in started:
        srv.stop()


def body(i: int, model: str = "gpt-4", **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": f"seat {i}: choose — «é»"}], **extra}


def lines(n: int, model: str = "gpt-4", **extra: Any) -> list[dict[str, Any]]:
    return [{"custom_id": f"s{i}", "method": "POST", "url": "/v1/chat/completions", "body": body(i, model, **extra)}
            for i in range(n)]


def jsonl(items: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(item, ensure_ascii=False) + "\r\n" for item in items).encode()


def submit(client: openai.OpenAI, items: list[dict[str, Any]], **metadata: str):
    uploaded = client.files.create(file=("seats.jsonl", jsonl(items)), purpose="batch")
    return client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                 completion_window="24h", metadata=metadata or None)


def wait(client: openai.OpenAI, batch_id: str, until: tuple[str, ...] = FINAL) -> tuple[Any, list[str]]:
    """Poll until the batch's status is one of ``until``: (the last Batch, every status seen)."""
    statuses = []
    for _ in range(MAX_POLLS):
        batch = client.batches.retrieve(batch_id)
        statuses.append(batch.status)
        if batch.status in until:
            return batch, statuses
        time.sleep(0.005)
    raise AssertionError(f"{batch_id} still {statuses[-1]} after {MAX_POLLS} polls")


def read_lines(client: openai.OpenAI, file_id: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in client.files.content(file_id).text.splitlines()]


def test_a_batch_answers_each_line_as_the_synchronous_call_with_its_body_does(serve):
    srv, client = serve(validate_s=0.05, run_s=0.1)
    items = lines(6)
    uploaded = client.files.create(file=("seats.jsonl", jsonl(items)), purpose="batch")
    assert (uploaded.object, uploaded.purpose, uploaded.status, uploaded.filename) == (
        "file", "batch", "processed", "seats.jsonl")
    assert uploaded.bytes == len(jsonl(items))
    assert client.files.retrieve(uploaded.id) == uploaded
    assert client.files.content(uploaded.id).content == jsonl(items)  # multipart bytes kept exactly

    batch = client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                  completion_window="24h", metadata={"run": "beauty_L"})
    assert batch.status == "validating" and batch.output_file_id is None and batch.metadata == {"run": "beauty_L"}
    done, statuses = wait(client, batch.id)
    assert done.status == "completed" and done.error_file_id is None and done.errors is None
    assert done.request_counts.model_dump() == {"total": 6, "completed": 6, "failed": 0}
    assert done.in_progress_at is not None and done.finalizing_at is not None and done.completed_at is not None
    assert done.created_at <= done.in_progress_at <= done.finalizing_at <= done.completed_at
    assert done.failed_at is None and done.cancelled_at is None and done.model == "gpt-4"

    out = read_lines(client, done.output_file_id)
    assert sorted(line["custom_id"] for line in out) == [f"s{i}" for i in range(6)]
    assert len({line["id"] for line in out}) == 6 and all(line["id"].startswith("batch_req_") for line in out)
    assert all(line["error"] is None and line["response"]["status_code"] == 200 for line in out)
    assert srv.sync_chat_requests() == 0 and srv.requests == []  # batch lines are no synchronous calls
    assert srv.batch.lines_answered == 6
    assert srv.batch.retrieves[batch.id] == len(statuses)
    assert srv.batch.created[0]["custom_ids"] == [f"s{i}" for i in range(6)]
    assert srv.batch.created[0]["bodies"] == [item["body"] for item in items]
    assert [f["id"] for f in srv.batch.uploads] == [uploaded.id] and srv.batch.downloads[-1] == done.output_file_id

    by_id = {line["custom_id"]: line["response"]["body"] for line in out}
    for item in items:
        sync = client.chat.completions.with_raw_response.create(**item["body"]).http_response.json()
        assert by_id[item["custom_id"]] == sync
    assert srv.sync_chat_requests() == 6
    usage = done.usage
    assert usage is not None
    assert usage.input_tokens == sum(b["usage"]["prompt_tokens"] for b in by_id.values())
    assert usage.output_tokens == sum(b["usage"]["completion_tokens"] for b in by_id.values())


def test_output_lines_may_come_in_an_order_of_their_own(serve):
    _, client = serve()
    done, _ = wait(client, submit(client, lines(20)).id)
    order = [line["custom_id"] for line in read_lines(client, done.output_file_id)]
    assert sorted(order) == sorted(f"s{i}" for i in range(20)) and order != [f"s{i}" for i in range(20)]


def test_a_slow_validation_shows_validating_then_in_progress_with_counts_that_grow(serve):
    srv, client = serve(validate_s=0.3, run_s=0.3)
    batch = submit(client, lines(30))
    assert batch.status == "validating" and batch.in_progress_at is None
    _, statuses = wait(client, batch.id, until=("in_progress",))
    assert set(statuses[:-1]) <= {"validating"} and statuses[-1] == "in_progress"
    seen = []
    done = None
    for _ in range(MAX_POLLS):
        done = client.batches.retrieve(batch.id)
        seen.append(done.request_counts.completed)
        if done.status == "completed":
            break
        assert done.status in ("in_progress", "finalizing") and done.request_counts.total == 30
        time.sleep(0.005)
    assert done is not None and done.status == "completed"
    assert seen == sorted(seen) and seen[-1] == 30
    assert srv.batch.batch(batch.id)["status"] == "completed"  # a look that is no retrieve
    assert srv.batch.retrieves[batch.id] == len(statuses) + len(seen)


def test_lines_that_fail_go_to_the_error_file_with_their_status(serve):
    failures = {"s1": (500, api_error("The server had an error.", "server_error")),
                "s4": (400, api_error("Invalid 'messages'.", param="messages"))}
    srv, client = serve(line_error=lambda custom_id, _: failures.get(custom_id))
    done, _ = wait(client, submit(client, lines(5)).id)
    assert done.status == "completed"
    assert done.request_counts.model_dump() == {"total": 5, "completed": 3, "failed": 2}
    assert sorted(line["custom_id"] for line in read_lines(client, done.output_file_id)) == ["s0", "s2", "s3"]
    errors = {line["custom_id"]: line for line in read_lines(client, done.error_file_id)}
    assert set(errors) == {"s1", "s4"}
    for custom_id, (status, error) in failures.items():
        line = errors[custom_id]
        assert line["error"] is None and line["response"]["status_code"] == status
        assert line["response"]["body"] == error and line["response"]["request_id"].startswith("req_")
    assert srv.batch.lines_answered == 5 and srv.sync_chat_requests() == 0


def test_a_line_the_api_refuses_is_refused_in_a_batch_as_when_sent_alone(serve):
    _, client = serve()
    done, _ = wait(client, submit(client, lines(2, model="o3", temperature=0.7)).id)
    assert done.output_file_id is None and done.request_counts.failed == 2  # completed, with nothing answered
    line = read_lines(client, done.error_file_id)[0]
    with pytest.raises(openai.BadRequestError) as sync:
        client.chat.completions.create(**body(0, "o3", temperature=0.7))
    assert line["response"]["status_code"] == 400 and line["response"]["body"] == sync.value.response.json()


def test_a_bad_input_file_fails_the_batch_at_validation_with_its_errors(serve):
    srv, client = serve(validate_s=0.05)
    items = lines(4)
    items[1]["url"] = "/v1/completions"
    items[3]["custom_id"] = "s0"
    items[2]["body"]["model"] = "gpt-4o"
    batch = submit(client, items)
    assert batch.status == "validating" and batch.errors is None
    done, statuses = wait(client, batch.id)
    assert statuses[0] == "validating" and done.status == "failed"
    assert done.errors is not None and done.errors.object == "list"
    assert [(e.code, e.line, e.param) for e in done.errors.data] == [
        ("url_mismatch", 2, "url"), ("model_mismatch", 3, "body.model"), ("duplicate_custom_id", 4, "custom_id")]
    assert all(e.message for e in done.errors.data)
    assert done.failed_at is not None and done.in_progress_at is None
    assert done.output_file_id is None and done.error_file_id is None
    assert done.request_counts.model_dump() == {"total": 0, "completed": 0, "failed": 0}
    assert srv.batch.lines_answered == 0


def test_an_unreadable_or_empty_input_file_fails_the_batch(serve):
    _, client = serve()
    uploaded = client.files.create(file=("seats.jsonl", b'{"custom_id": "s0", not json\n'), purpose="batch")
    batch = client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                  completion_window="24h")
    done, _ = wait(client, batch.id)
    assert [(e.code, e.line) for e in done.errors.data] == [("invalid_json_line", 1)]
    empty = client.files.create(file=("none.jsonl", b"\n"), purpose="batch")
    done, _ = wait(client, client.batches.create(input_file_id=empty.id, endpoint="/v1/chat/completions",
                                                 completion_window="24h").id)
    assert [e.code for e in done.errors.data] == ["empty_file"]


def test_the_outcome_knob_fails_expires_or_cancels_the_batches_it_names(serve):
    outcomes = ["completed", "failed", "expired", "cancelled"]
    srv, client = serve(outcome=lambda index: outcomes[index], stop_after=2)
    finals = [wait(client, submit(client, lines(5)).id)[0] for _ in outcomes]
    assert [b.status for b in finals] == outcomes
    failed = finals[1]
    assert [e.code for e in failed.errors.data] == ["token_limit_exceeded"] and failed.failed_at is not None
    assert [c["index"] for c in srv.batch.created] == [0, 1, 2, 3]
    for finished in finals[:3]:  # a batch that has ended cannot be cancelled
        with pytest.raises(openai.APIStatusError) as late:
            client.batches.cancel(finished.id)
        assert late.value.status_code == 409 and finished.status in late.value.message


def test_an_expired_batch_has_the_lines_it_ran_and_batch_expired_for_the_rest(serve):
    srv, client = serve(outcome=lambda _: "expired", stop_after=2, run_s=0.05)
    done, statuses = wait(client, submit(client, lines(5)).id)
    assert done.status == "expired" and "finalizing" not in statuses
    assert done.expired_at is not None and done.completed_at is None
    assert done.request_counts.model_dump() == {"total": 5, "completed": 2, "failed": 3}
    assert sorted(line["custom_id"] for line in read_lines(client, done.output_file_id)) == ["s0", "s1"]
    expired = read_lines(client, done.error_file_id)
    assert sorted(line["custom_id"] for line in expired) == ["s2", "s3", "s4"]
    for line in expired:  # the guide's shape exactly
        assert set(line) == {"id", "custom_id", "response", "error"} and line["id"].startswith("batch_req_")
        assert line["response"] is None and line["error"] == BATCH_EXPIRED
    assert BATCH_EXPIRED["message"] == "This request could not be executed before the completion window expired."
    assert srv.batch.lines_answered == 2


def test_finalizing_and_cancelling_last_as_long_as_the_knobs_say(serve):
    _, client = serve(finalize_s=30)
    finalizing, _ = wait(client, submit(client, lines(2)).id, until=("finalizing",))
    assert finalizing.finalizing_at is not None and finalizing.completed_at is None
    assert finalizing.output_file_id is None and finalizing.request_counts.completed == 2
    _, client = serve(outcome=lambda _: "cancelled", cancel_s=30)
    cancelling, _ = wait(client, submit(client, lines(2)).id, until=("cancelling",))
    assert cancelling.cancelling_at is not None and cancelling.cancelled_at is None
    assert cancelling.output_file_id is None


def test_someone_elses_cancel_leaves_the_lines_answered_before_it(serve):
    _, client = serve(outcome=lambda _: "cancelled", stop_share=0.5)
    done, _ = wait(client, submit(client, lines(6)).id)
    assert done.status == "cancelled"
    assert done.cancelling_at is not None and done.cancelled_at is not None and done.error_file_id is None
    assert sorted(line["custom_id"] for line in read_lines(client, done.output_file_id)) == ["s0", "s1", "s2"]
    assert done.request_counts.model_dump() == {"total": 6, "completed": 3, "failed": 0}


def test_a_cancel_mid_run_keeps_the_lines_answered_before_it(serve):
    srv, client = serve(run_s=60, cancel_s=0.05)  # 10 lines a second: a cancel comes mid-run
    batch = submit(client, lines(600))
    wait(client, batch.id, until=("in_progress",))
    for _ in range(MAX_POLLS):
        if client.batches.retrieve(batch.id).request_counts.completed:
            break
        time.sleep(0.005)
    cancelling = client.batches.cancel(batch.id)
    assert cancelling.status == "cancelling" and cancelling.cancelling_at is not None
    answered = cancelling.request_counts.completed
    assert 0 < answered < 600
    done, _ = wait(client, batch.id)
    assert done.status == "cancelled" and done.cancelled_at is not None and done.completed_at is None
    assert done.request_counts.completed == answered
    out = read_lines(client, done.output_file_id)
    assert sorted(int(line["custom_id"][1:]) for line in out) == list(range(answered))
    assert srv.batch.cancels == [batch.id] and srv.batch.lines_answered == answered
    assert client.batches.cancel(batch.id).status == "cancelled"  # a second cancel changes nothing


def test_a_cancel_while_validating_answers_nothing(serve):
    srv, client = serve(validate_s=30)
    batch = submit(client, lines(3))
    assert client.batches.cancel(batch.id).status == "cancelled"  # cancel_s 0: at once
    done = client.batches.retrieve(batch.id)
    assert done.output_file_id is None and done.in_progress_at is None and srv.batch.lines_answered == 0


def test_the_hold_keeps_batches_in_progress_until_set(serve):
    hold = threading.Event()
    srv, client = serve(hold=hold)
    batch = submit(client, lines(3))
    for _ in range(20):
        held = client.batches.retrieve(batch.id)
        assert held.status == "in_progress" and held.output_file_id is None
    assert held.request_counts.completed == 3  # every line answered, the batch not yet finalized
    hold.set()
    later = openai.OpenAI(api_key="sk-test-local", base_url=srv.base_url, max_retries=0)  # another client
    done, _ = wait(later, batch.id)
    assert done.status == "completed" and len(read_lines(later, done.output_file_id)) == 3
    assert srv.batch.retrieves[batch.id] == 21


def test_creates_the_api_refuses_get_a_400_and_create_nothing(serve):
    srv, client = serve()
    with pytest.raises(openai.BadRequestError) as unknown:
        client.batches.create(input_file_id="file-nope", endpoint="/v1/chat/completions", completion_window="24h")
    assert unknown.value.body["param"] == "input_file_id"
    uploaded = client.files.create(file=("seats.jsonl", jsonl(lines(1))), purpose="batch")
    with pytest.raises(openai.BadRequestError) as endpoint:
        client.batches.create(input_file_id=uploaded.id, endpoint="/v1/embeddings", completion_window="24h")
    assert endpoint.value.body["param"] == "endpoint"
    with pytest.raises(openai.BadRequestError) as metadata:
        client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                              completion_window="24h", metadata={"k": "v" * 513})
    assert metadata.value.body["param"] == "metadata"
    with pytest.raises(openai.BadRequestError) as not_jsonl:
        client.files.create(file=b"{}", purpose="batch")  # a name is needed: the API wants .jsonl
    assert "jsonl" in not_jsonl.value.message
    with pytest.raises(openai.NotFoundError):
        client.batches.retrieve("batch_nope")
    with pytest.raises(openai.NotFoundError):
        client.files.content("file-nope")
    assert srv.batch.created == [] and len(srv.batch.refused) == 3 and len(srv.batch.uploads) == 1


def test_batches_are_listed_newest_first_a_page_at_a_time(serve):
    _, client = serve()
    ids = [submit(client, lines(1), n=str(i)).id for i in range(3)]
    page = client.batches.list(limit=2)
    assert [b.id for b in page.data] == ids[::-1][:2] and page.has_more
    assert [b.id for b in client.batches.list(limit=2)] == ids[::-1]  # iterating follows has_more
