"""Secrets are masked wherever this project prints, records or renders a command or settings."""
from __future__ import annotations

from econarena_evals.core.redact import is_secret_name, redact_command, redact_mapping, redact_text, redact_url

KEY = "sk-FAKE-9f8e7d6c5b4a"


def test_secret_names_but_not_token_budgets():
    for name in ("api_key", "OPENAI_API_KEY", "x-api-key", "auth_token", "client_secret", "password", "Authorization"):
        assert is_secret_name(name), name
    for name in ("max_tokens", "max_completion_tokens", "model", "temperature", "response_format"):
        assert not is_secret_name(name), name


def test_command_line_completion_args():
    command = f"oaieval econarena/chat --completion_args model=gpt-4o,api_key={KEY},max_tokens=5 econarena.beauty_L"
    masked = redact_command(command)
    assert KEY not in masked and "api_key=***" in masked and "max_tokens=5" in masked and "model=gpt-4o" in masked


def test_json_values_and_headers():
    text = 'extra_headers={"x-api-key":"abc123","X-Title":"econarena"}'
    assert redact_text(text) == 'extra_headers={"x-api-key":"***","X-Title":"***"}'
    assert "Bearer ***" in redact_text("Authorization: Bearer abcdefgh12") or "***" in redact_text(
        "Authorization: Bearer abcdefgh12")
    assert KEY not in redact_text(f"error: key {KEY} refused")


def test_mappings_and_urls():
    settings = {"model": "m", "api_key": KEY, "extra_headers": {"Authorization": "Bearer x", "X-Title": "t"},
                "max_tokens": 5}
    assert redact_mapping(settings) == {"model": "m", "api_key": "***",
                                        "extra_headers": {"Authorization": "***", "X-Title": "***"}, "max_tokens": 5}
    url = redact_url("https://user:pw@host.example:8443/v1?api-key=s3cret&x=1")
    assert url == "https://host.example:8443/v1?api-key=***&x=***"


def test_every_query_value_and_userinfo_whatever_their_names():
    assert redact_url("http://u:S1@h/v1?gw=S3&flag&S9") == "http://h/v1?gw=***&***&***"
    assert redact_url("http://h:notaport/v1") == "***"
    text = "HTTP Request: POST http://user:S1@127.0.0.1:5/v1/?gw=S3chat/completions \"HTTP/1.1 200 OK\""
    masked = redact_text(text)
    assert "S1" not in masked and "S3" not in masked and "http://127.0.0.1:5/v1/?gw=***" in masked


def test_every_header_value_whatever_its_name():
    command = ("oaieval econarena/chat:m econarena.beauty_L --completion_args "
               "'api_base=http://u:S1@h/v1?gw=S3,api_key=S5,extra_headers={\"X-Gateway-Auth\":\"S4\"}'")
    masked = redact_command(command)
    assert not [s for s in ("S1", "S3", "S4", "S5") if s in masked], masked
    assert 'extra_headers={"X-Gateway-Auth":"***"}' in masked and "model" not in masked
    assert redact_text("{'extra_headers': {'X-Gateway-Auth': 'S4'}}") == "{'extra_headers': {'X-Gateway-Auth': '***'}}"
    assert redact_mapping({"extra_headers": '{"X-Gateway-Auth": "S4"}'}) == {
        "extra_headers": '{"X-Gateway-Auth": "***"}'}
    assert redact_mapping({"extra_body": {"extra_headers": {"A": 1}}, "api_base": "http://u:S1@h/v1?q=S2"}) == {
        "extra_body": {"extra_headers": {"A": "***"}}, "api_base": "http://h/v1?q=***"}
