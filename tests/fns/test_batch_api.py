"""``econarena/chat``'s batch mode, the fn's side: its args, its lines, and a line's answer read back."""
from __future__ import annotations

import pytest
from openai.types import Batch

from econarena_evals.fns.batch_api import batch_api, parsed, status_of
from econarena_evals.fns.chat import ChatCompletionFn, chat_messages, reply_of


def fn(**kw) -> ChatCompletionFn:
    return ChatCompletionFn(model=kw.pop("model", "gpt-4o"), api_base="http://127.0.0.1:9/v1", api_key="sk-x", **kw)


@pytest.mark.parametrize("args,said", [({"batch": "maybe"}, "batch must be yes or no"),
                                       ({"batch_fallback": "2"}, "batch_fallback must be yes or no"),
                                       ({"batch": "yes", "batch_poll_s": "0"}, "batch_poll_s must be a number above 0"),
                                       ({"batch": "yes", "azure_endpoint": "https://x.openai.azure.com",
                                         "api_version": "2024-10-21"}, "Azure")])
def test_a_batch_arg_outside_its_domain_is_refused(args, said):
    with pytest.raises(ValueError, match=said):
        ChatCompletionFn(model="gpt-4o", **args)


def test_a_batch_line_is_the_synchronous_request_without_the_transport_args():
    chat = fn(batch="yes", temperature="0", extra_body='{"top_k": 40}')
    prompt = [{"role": "system", "content": "rules"}, {"role": "user", "content": "guess"}]
    messages, body = chat.batch_request(prompt, temperature=0.7, max_tokens=16, seed=3, request_timeout_s=5,
                                        connect_timeout_s=2)
    assert messages == chat_messages(prompt)
    assert body == chat.request(chat_messages(prompt), temperature=0.7, max_tokens=16, seed=3)
    assert body["temperature"] == 0 and "request_timeout_s" not in body and "connect_timeout_s" not in body


def test_one_batch_api_per_endpoint_key_and_model_and_none_without_batch_mode():
    a, b, other = fn(batch="yes"), fn(batch="yes"), fn(batch="yes", model="gpt-4o-mini")
    assert batch_api(fn()) is None and batch_api(object()) is None
    assert batch_api(a) is batch_api(b)
    assert batch_api(other) is not batch_api(a)  # the API refuses a batch of two models


def test_a_lines_response_reads_as_a_synchronous_one():
    body = {"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-4o",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": '{"choice": 3}'},
                         "finish_reason": "length"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}
    assert reply_of(parsed(body)) == ('{"choice": 3}', "length")
    assert parsed(body).usage.total_tokens == 12


def test_a_batch_status_flattens_the_apis_counts_and_validation_errors():
    batch = Batch.model_validate({
        "id": "batch_1", "object": "batch", "endpoint": "/v1/chat/completions", "input_file_id": "file-1",
        "completion_window": "24h", "status": "failed", "created_at": 1,
        "request_counts": {"total": 3, "completed": 1, "failed": 2},
        "errors": {"object": "list", "data": [{"code": "url_mismatch", "message": "wrong url", "line": 2}]}})
    status = status_of(batch)
    assert (status.status, status.total, status.completed, status.failed) == ("failed", 3, 1, 2)
    assert status.errors == "line 2: wrong url" and status.output_file_id is None
    assert status.notes == ()


def test_a_batch_object_of_the_wrong_shape_is_read_with_its_odd_fields_named():
    """The openai client parses leniently (``construct``): a gateway's strings where objects or
    numbers belong arrive as they are, and must not make every look at the batch fail."""
    batch = Batch.construct(**{
        "id": "batch_2", "object": "batch", "status": "in_progress", "output_file_id": None, "error_file_id": 7,
        "request_counts": {"total": "two hundred", "completed": 5, "failed": True},
        "errors": {"object": "list", "data": ["a note, not an error object", {"message": "m", "line": "x"}]}})
    status = status_of(batch)
    assert (status.status, status.total, status.completed, status.failed) == ("in_progress", 0, 5, 0)
    assert status.errors == "a note, not an error object; m" and status.error_file_id is None
    assert len(status.notes) == 4 and all("ignored" in note for note in status.notes)
    assert any("request_counts.total is str 'two hundred'" in note for note in status.notes)
