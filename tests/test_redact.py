"""Secrets are masked wherever this project prints, records or renders a command or settings."""
from __future__ import annotations

from econarena_evals.redact import is_secret_name, redact_command, redact_mapping, redact_text, redact_url

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
    assert redact_text(text) == 'extra_headers={"x-api-key":"***","X-Title":"econarena"}'
    assert "Bearer ***" in redact_text("Authorization: Bearer abcdefgh12") or "***" in redact_text(
        "Authorization: Bearer abcdefgh12")
    assert KEY not in redact_text(f"error: key {KEY} refused")


def test_mappings_and_urls():
    settings = {"model": "m", "api_key": KEY, "extra_headers": {"Authorization": "Bearer x", "X-Title": "t"},
                "max_tokens": 5}
    assert redact_mapping(settings) == {"model": "m", "api_key": "***",
                                        "extra_headers": {"Authorization": "***", "X-Title": "t"}, "max_tokens": 5}
    url = redact_url("https://user:pw@host.example:8443/v1?api-key=s3cret&x=1")
    assert url == "https://host.example:8443/v1?api-key=***&x=1"
