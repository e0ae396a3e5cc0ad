"""One try per seat call, for the completion fns whose retrying we know: evals' own and ours.

evals 3.0.1.post1's OpenAI fns (``gpt-4``, ``gpt-3.5-turbo``, any model the endpoint lists) retry
with no limit inside the call, through a fresh ``OpenAI()`` client whose own ``max_retries=2`` and
600 s timeout come on top. Under that, neither ``max_attempts`` nor ``call_timeout_s`` could hold,
and a dead endpoint kept being hit after the eval gave up. So for exactly those two classes (not
subclasses that bring their own ``__call__``) we send the same request evals would send, the same
prompt formatting, the same ``record_sampling``, through one shared client with no retries of its
own and a timeout of ``call_timeout_s``; the eval's call policy does the retrying (``calls``).

``econarena/chat`` gets the deadline as its request timeout. Any other completion fn is called as
it is: the deadline still bounds how long the eval waits for it, but its own retries are its own.
"""
from __future__ import annotations

from typing import Any, Callable

from evals.api import CompletionFn, CompletionResult
from evals.completion_fns import openai as evals_openai
from evals.prompt.base import ChatCompletionPrompt, CompletionPrompt, Prompt
from evals.record import record_sampling

from .chat import ChatCompletionFn, shared_client

SeatFn = Callable[..., CompletionResult]


def _evals_chat(fn: Any, timeout_s: float) -> SeatFn:
    def call(prompt: Any, **kwargs: Any) -> CompletionResult:
        if not isinstance(prompt, Prompt):
            prompt = ChatCompletionPrompt(raw_prompt=prompt)
        messages = prompt.to_formatted_prompt()
        client = shared_client(fn.api_base, fn.api_key, timeout_s, max_retries=0)
        raw = client.chat.completions.create(model=fn.model, messages=messages, **{**kwargs, **fn.extra_options})
        result = evals_openai.OpenAIChatCompletionResult(raw_data=raw, prompt=messages)
        record_sampling(prompt=result.prompt, sampled=result.get_completions(), model=raw.model, usage=raw.usage)
        return result

    return call


def _evals_completion(fn: Any, timeout_s: float) -> SeatFn:
    def call(prompt: Any, **kwargs: Any) -> CompletionResult:
        if not isinstance(prompt, Prompt):
            prompt = CompletionPrompt(raw_prompt=prompt)
        text = prompt.to_formatted_prompt()
        client = shared_client(fn.api_base, fn.api_key, timeout_s, max_retries=0)
        raw = client.completions.create(model=fn.model, prompt=text, **{**kwargs, **fn.extra_options})
        result = evals_openai.OpenAICompletionResult(raw_data=raw, prompt=text)
        record_sampling(prompt=result.prompt, sampled=result.get_completions(), model=raw.model, usage=raw.usage)
        return result

    return call


def single_try(fn: CompletionFn, timeout_s: float) -> SeatFn:
    """A callable like ``fn`` that makes at most one request and gives up after ``timeout_s``."""
    method = type(fn).__dict__.get("__call__") or next(
        (k.__dict__["__call__"] for k in type(fn).__mro__ if "__call__" in k.__dict__), None)
    if method is evals_openai.OpenAIChatCompletionFn.__call__:
        return _evals_chat(fn, timeout_s)
    if method is evals_openai.OpenAICompletionFn.__call__:
        return _evals_completion(fn, timeout_s)
    if isinstance(fn, ChatCompletionFn):
        return lambda prompt, **kwargs: fn(prompt, **kwargs, request_timeout_s=timeout_s)
    return fn
