"""What the eval sends and reports matches the contract: sampling defaults and token usage."""
from __future__ import annotations

import pytest

from econarena_evals.log.evallog import read_log

from conftest import REGISTRY, base_env, cli, run_cli
from openai_server import OpenAIServer
from policies import scripted

pytestmark = pytest.mark.e2e  # every test here starts a process or a server


@pytest.fixture(scope="module")
def plain_server():
    srv = OpenAIServer(scripted, models=("gpt-4",), plain_usage=True).start()
    yield srv
    srv.stop()


@pytest.mark.parametrize("fn", ["gpt-4", "econarena/chat:gpt-4"])
def test_defaults_reach_the_endpoint_and_usage_holds_only_what_was_sent(fn, plain_server, tmp_path):
    env = base_env() | {"OPENAI_BASE_URL": plain_server.base_url, "OPENAI_API_KEY": "sk-local"}
    before = len(plain_server.requests)
    log = tmp_path / "log.jsonl"
    run_cli([cli("oaieval"), fn, "econarena.beauty_L", "--registry_path", str(REGISTRY), "--record_path", str(log),
             "--max_samples", "1"], env)
    bodies = [r["body"] for r in plain_server.requests[before:]]
    assert len(bodies) == 50
    assert {b["temperature"] for b in bodies} == {0.7}  # contract §7b
    assert {b["max_tokens"] for b in bodies} == {1024}
    report = read_log(log).final_report
    assert report["usage_total_tokens"] > 0
    assert not [k for k in report if "details" in k], report  # the server sent no *_details
