"""econarena/chat against a real local OpenAI-compatible server, through the real oaieval."""
from __future__ import annotations

import pytest
from test_e2e import assert_rescores, sampling_events

from econarena_evals.fns.chat import ChatCompletionFn
from econarena_evals.log.evallog import read_log

from conftest import REGISTRY, cli, run_cli


def run(fn: str, env: dict, tmp_path, *extra: str, cell: str = "beauty_L", samples: int = 2):
    log = tmp_path / "log.jsonl"
    run_cli([cli("oaieval"), fn, f"econarena.{cell}", "--registry_path", str(REGISTRY), "--record_path", str(log),
             "--max_samples", str(samples), *extra], env)
    return read_log(log)


@pytest.mark.e2e
def test_stock_evals_sends_unknown_names_to_the_legacy_endpoint(model_env, server, tmp_path):
    """Why econarena/chat exists: evals' own fn routes a listed non-gpt-4 name to /v1/completions."""
    before = len(server.bodies("my-local-model"))  # the server is shared by the session's tests
    log = run("my-local-model", model_env, tmp_path, samples=1)
    paths = {p for p, _ in server.bodies("my-local-model")[before:]}
    assert paths == {"/v1/completions"}
    assert log.final_report["sessions"] == 1


@pytest.mark.e2e
def test_chat_fn_calls_the_chat_endpoint_for_any_name(model_env, server, tmp_path):
    name = "my-local-model"
    before = len(server.bodies(name))
    log = run("econarena/chat", model_env, tmp_path, "--completion_args", f"model={name}", cell="auction_L")
    requests = server.bodies(name)[before:]
    assert len(requests) == 2 * 50 and {p for p, _ in requests} == {"/v1/chat/completions"}
    body = requests[0][1]
    assert body["temperature"] == 0.7 and body["max_tokens"] == 1024 and isinstance(body["seed"], int)
    # nested usage from the server is flat in the log, so evals adds it to the report
    usage = sampling_events(log)[0]["data"]["usage"]
    assert all(isinstance(v, int) for v in usage.values())
    recorded = sum(e["data"]["usage"]["total_tokens"] for e in sampling_events(log))
    assert log.final_report["usage_total_tokens"] == recorded
    assert log.final_report["errored_sessions"] == 0
    assert_rescores(log)


@pytest.mark.e2e
def test_reasoning_model_gets_no_temperature_and_max_completion_tokens(model_env, server, tmp_path):
    log = run("econarena/chat:o3-mini", model_env, tmp_path, "--completion_args", "reasoning_effort=low")
    requests = server.bodies("o3-mini")
    assert len(requests) == 2 * 50
    for _, body in requests:
        assert "temperature" not in body and "max_tokens" not in body
        assert body["max_completion_tokens"] == 16384 and body["reasoning_effort"] == "low"
    assert log.final_report["usage_completion_tokens_details_reasoning_tokens"] == 7 * 2 * 50
    assert log.players == ["econarena/chat:o3-mini"]


@pytest.mark.e2e
def test_a_model_that_refuses_temperature_is_retried_without_it(model_env, server, tmp_path):
    log = run("econarena/chat:strict-local", model_env, tmp_path)
    requests = [b for _, b in server.bodies("strict-local")]
    refused = [b for b in requests if "temperature" in b]
    # calls already in flight when the first refusal came back are each refused once, then retried
    # without temperature; later calls know the model and never send one
    assert len(refused) >= 1 and len(requests) == 2 * 50 + len(refused)
    assert log.final_report["sessions"] == 2 and log.final_report["errored_sessions"] == 0


@pytest.mark.e2e
def test_arena_of_two_chat_models_by_name(model_env, server, tmp_path):
    log = run("econarena/chat:model-a,econarena/chat:model-b", model_env, tmp_path, cell="beauty_hist")
    assert len(server.bodies("model-a")) == 2 * 10 and len(server.bodies("model-b")) == 2 * 40
    assert "eas/econarena/chat:model-b" in log.final_report
    assert_rescores(log)


def test_configuration_errors_are_clear(monkeypatch):
    monkeypatch.delenv("ECONARENA_MODEL", raising=False)
    with pytest.raises(ValueError, match="needs a model"):
        ChatCompletionFn()
    with pytest.raises(ValueError, match="reasoning_effort"):
        ChatCompletionFn(model="o3", reasoning_effort="extreme")
    fn = ChatCompletionFn(model="gpt-4o", api_base="http://127.0.0.1:9/v1")
    assert not fn.reasoning and fn.api_key == "no-key"
    assert fn.request([{"role": "user", "content": "x"}], temperature=0, max_tokens=5, seed=1) == {
        "model": "gpt-4o", "messages": [{"role": "user", "content": "x"}], "temperature": 0, "max_tokens": 5, "seed": 1}
    assert ChatCompletionFn(model="o4-mini").reasoning and ChatCompletionFn(model="gpt-5.1").reasoning
    assert not ChatCompletionFn(model="o4-mini", reasoning="false").reasoning


@pytest.mark.e2e
def test_a_base_url_with_a_query_sends_the_query_with_every_request(model_env, server, tmp_path):
    """A gateway that takes its key in the query (``/v1?key=...``): the route stays the route and the
    query is the request's own (the openai client alone would send ``/v1/?key=...chat/completions``)."""
    name = "query-gateway-model"
    env = {**model_env, "OPENAI_BASE_URL": f"{model_env['OPENAI_BASE_URL']}?gw=abc&tier=1"}
    log = run(f"econarena/chat:{name}", env, tmp_path, samples=1)
    paths = {p for p, _ in server.bodies(name)}
    assert paths == {"/v1/chat/completions?gw=abc&tier=1"}
    assert log.final_report["errored_sessions"] == 0
