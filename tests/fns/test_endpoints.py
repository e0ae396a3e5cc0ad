"""fns/endpoints.py: which calls share a lane, what a request reserves, and one try per seat call."""
from __future__ import annotations

import pytest
from evals.completion_fns.openai import OpenAIChatCompletionFn

from econarena_evals.fns.chat import ChatCompletionFn
from econarena_evals.fns.endpoints import check_args, lane_key, reserved_completion_tokens, single_try
from econarena_evals.fns.players import NashPlayer


def test_one_endpoint_key_and_model_is_one_lane_and_the_key_is_not_kept(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    a = ChatCompletionFn(model="m", api_base="http://127.0.0.1:1/v1/", api_key="sk-secret")
    b = ChatCompletionFn(model="m", api_base="http://127.0.0.1:1/v1", api_key="sk-secret")
    other_key = ChatCompletionFn(model="m", api_base="http://127.0.0.1:1/v1", api_key="sk-other")
    other_model = ChatCompletionFn(model="n", api_base="http://127.0.0.1:1/v1", api_key="sk-secret")
    assert lane_key(a) == lane_key(b)  # a trailing slash is the same endpoint
    assert len({lane_key(a), lane_key(other_key), lane_key(other_model)}) == 3
    assert "sk-secret" not in repr(lane_key(a))


def test_evals_own_fn_shares_the_lane_of_the_environment_s_endpoint(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:2/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    fn = OpenAIChatCompletionFn(model="gpt-4")
    assert lane_key(fn)[0] == "http://127.0.0.1:2/v1" and lane_key(fn)[2] == "gpt-4"


def test_a_built_in_player_has_no_lane_and_is_called_as_it_is():
    player = NashPlayer()
    assert lane_key(player) is None
    assert single_try(player, 5.0) is player


def test_reserved_tokens_follow_the_fn_s_own_setting_before_the_eval_s():
    fn = OpenAIChatCompletionFn(model="gpt-4", extra_options={"max_tokens": 77})
    assert reserved_completion_tokens(fn, {"max_tokens": 1024}) == 77
    assert reserved_completion_tokens(OpenAIChatCompletionFn(model="gpt-4"), {"max_tokens": 1024}) == 1024


@pytest.mark.parametrize("options", [{"temperature": float("nan")}, {"max_tokens": 0}, "temperature=1"])
def test_extra_options_every_request_would_be_refused_for_are_refused_before_any_call(options):
    fn = OpenAIChatCompletionFn(model="gpt-4", extra_options={})
    fn.extra_options = options
    with pytest.raises(ValueError):
        check_args(fn)
