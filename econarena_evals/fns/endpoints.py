"""One try per seat call, for the completion fns whose retrying we know: evals' own and ours.

evals 3.0.1.post1's OpenAI fns (``gpt-4``, ``gpt-3.5-turbo``, any model the endpoint lists) retry
with no limit inside the call, through a fresh ``OpenAI()`` client whose own ``max_retries=2`` and
600 s timeout come on top. Under that, neither ``max_attempts`` nor ``call_timeout_s`` could hold,
and a dead endpoint kept being hit after the eval gave up. So for exactly those two classes (not
subclasses that bring their own ``__call__``) we send the same request evals would send, the same
prompt formatting, the same ``record_sampling``, through one shared client with no retries of its
own; the eval's call policy does the retrying and bounds the wait (``calls``). The client's
timeout is ``calls.request_timeout``, long enough for a healthy server's queue (the eval's deadline
counts the endpoint's silence, not the time queued); it must connect within ``call_timeout_s``.

``econarena/chat`` gets the same timeouts. Any other completion fn is called as
it is: the deadline still bounds how long the eval waits for it, but its own retries are its own.
"""
from __future__ import annotations

import hashlib
import os
from typing import Any, Callable, Optional

from evals.api import CompletionFn, CompletionResult
from evals.completion_fns import openai as evals_openai
from evals.prompt.base import ChatCompletionPrompt, CompletionPrompt, Prompt
from evals.record import record_sampling

from ..calls import seat_call
from ..calls.errors import NotACompletion
from ..calls.policy import request_timeout
from .chat import ChatCompletionFn, ChatResult, chat_messages, reply_of, shared_client
from .completion_args import (
    EXTRA_BODY_HINT,
    chat_arg_refusal,
    check_values,
    evals_fn_refusal,
    keyword_names,
    request_options,
    unknown_args,
)
from .reply_bytes import said

SeatFn = Callable[..., CompletionResult]


# evals' class -> (its prompt class, its result class, the client method, the method's prompt keyword)
_EVALS_FNS = {
    evals_openai.OpenAIChatCompletionFn.__call__: (ChatCompletionPrompt, evals_openai.OpenAIChatCompletionResult,
                                                  lambda client: client.chat.completions.with_raw_response.create,
                                                  "messages"),
    evals_openai.OpenAICompletionFn.__call__: (CompletionPrompt, evals_openai.OpenAICompletionResult,
                                              lambda client: client.completions.with_raw_response.create, "prompt"),
}


def _evals_one_try(fn: Any, timeout_s: float, prompt_cls: Any, result_cls: Any, create: Any, keyword: str) -> SeatFn:
    def call(prompt: Any, **kwargs: Any) -> CompletionResult:
        if not isinstance(prompt, Prompt):
            prompt = prompt_cls(raw_prompt=prompt)
        formatted = prompt.to_formatted_prompt()
        client = shared_client(fn.api_base, fn.api_key, request_timeout(timeout_s), max_retries=0, connect_s=timeout_s)
        try:
            response = create(client)(model=fn.model, **{keyword: formatted}, **{**kwargs, **fn.extra_options})
        except Exception as exc:  # the openai client's connection error says why, if a reply was too large
            told = said(exc)  # the openai client's connection error, saying why if a reply was too large
            if told is exc:
                raise
            raise told from exc.__cause__
        seat_call.heard(response.headers)  # its lane learns the key's stated limits
        raw = response.parse()
        text, finish = reply_of(raw, "message" if keyword == "messages" else "text")  # no completion: raises
        result = result_cls(raw_data=raw, prompt=formatted)
        differs = {"requested_model": fn.model} if raw.model and raw.model != fn.model else {}
        record_sampling(prompt=result.prompt, sampled=result.get_completions(), model=raw.model, usage=raw.usage,
                        finish_reason=finish, **differs)
        return ChatResult(text, raw)  # a null content is an empty reply, where evals' result has none

    return call


# What the client's create() takes that a fn sets itself on every request: the same name as a
# completion arg would replace the prompt, or clash with the fn's own keyword (a TypeError per call).
_SENT_BY_THE_FN = {"chat": frozenset({"model", "messages"}), "completions": frozenset({"model", "prompt"})}
_CREATE = {"chat": "chat.completions.create()", "completions": "completions.create()"}


def _route(keyword: str) -> str:
    return "chat" if keyword == "messages" else "completions"


def no_key_line(model: str, why: str) -> str:
    """The refusal of a run whose every request would go without an API key (said before the plan,
    not at the first call); no ``NAME=value`` in it, which the stop line would mask as a secret."""
    return (f"no API key for {model} ({why}): set the OPENAI_API_KEY environment variable to your key "
            "and run again (nothing was sent)")


def check_args(fn: CompletionFn) -> None:
    """Refuse (ValueError), before any call, what a fn would send on every request and the client
    or the endpoint would refuse every time: a completion arg neither econarena/chat nor the openai
    client's ``create()`` takes (a typo: ``temprature=0``), named with the closest known names;
    evals' own fns' args they drop, and an ``extra_options`` that is no object or holds an option
    ``create()`` does not take or a number outside its domain (``temperature=nan``, ``max_tokens=0``).
    econarena/chat checks its numbers itself; any other fn is its own judge."""
    if isinstance(fn, ChatCompletionFn):
        _check_chat(fn)
        return
    evals_fn = _EVALS_FNS.get(type(fn).__call__)
    if evals_fn is None:
        return
    route = _route(evals_fn[3])
    if type(fn) in (evals_openai.OpenAIChatCompletionFn, evals_openai.OpenAICompletionFn):
        if not (getattr(fn, "api_key", None) or os.environ.get("OPENAI_API_KEY")):
            # the openai client refuses to build without one, whatever the endpoint: every call would fail
            raise ValueError(no_key_line(str(fn.model), "evals' own OpenAI fns want one for any endpoint"))
        refusal = evals_fn_refusal(str(fn.model), type(fn), route, getattr(fn, "econarena_completion_args", None) or {})
        if refusal:  # OpenAICompletionFn drops what its constructor does not name: never sent, silently
            raise ValueError(refusal)
    options = getattr(fn, "extra_options", None)
    if options is None:
        return
    if not isinstance(options, dict):
        raise ValueError(f"completion arg extra_options must be a JSON object (extra_options=@file.json), "
                         f"got {options!r}")
    takes = request_options(route)
    line = unknown_args(options, None if takes is None else takes - _SENT_BY_THE_FN[route])
    if line:
        raise ValueError(f"unknown request option {line} in extra_options: neither {fn.model} nor the openai "
                         f"client's {_CREATE[route]} takes it; {EXTRA_BODY_HINT}")
    fn.extra_options = check_values(options)


def _check_chat(fn: ChatCompletionFn) -> None:
    """econarena/chat sends every completion arg it does not take itself into ``create()``."""
    if type(fn).request is not ChatCompletionFn.request or type(fn)._create is not ChatCompletionFn._create:
        return  # a subclass that builds its own request knows what it sends
    if fn.azure is None and fn.api_key is None:  # a local server (OPENAI_BASE_URL) needs none
        raise ValueError(no_key_line(fn.model, "its requests would go to the OpenAI API: no OPENAI_BASE_URL is set"))
    options = fn.extra_options
    if "messages" in options:
        raise ValueError("completion arg messages: econarena/chat sends the eval's prompt as messages")
    for name in ("extra_body", "extra_query"):
        if options.get(name) is not None and not isinstance(options[name], dict):
            raise ValueError(f"completion arg {name} must be a JSON object ({name}=@file.json), got {options[name]!r}")
    refusal = chat_arg_refusal(options, keyword_names(ChatCompletionFn.__init__, named_only=True) or ())
    if refusal:
        raise ValueError(refusal)


def lane_key(fn: CompletionFn) -> Optional[tuple[str, ...]]:
    """What shares a rate limit with ``fn``'s requests: (endpoint, key, model), the key hashed so it
    is not kept in the clear; None for a fn whose endpoint we cannot see (each is its own lane)."""
    if _EVALS_FNS.get(type(fn).__call__) is None and not isinstance(fn, ChatCompletionFn):
        return None
    azure = getattr(fn, "azure", None)
    base = ("/".join(azure[:2]) if azure else None) or getattr(fn, "api_base", None) or os.environ.get(
        "OPENAI_BASE_URL") or "https://api.openai.com/v1"
    key = getattr(fn, "api_key", None) or os.environ.get("OPENAI_API_KEY") or ""
    return (str(base).rstrip("/"), hashlib.sha256(str(key).encode()).hexdigest()[:16], str(getattr(fn, "model", "")))


def reserved_completion_tokens(fn: CompletionFn, sampling_kwargs: dict[str, Any]) -> int:
    """The completion tokens a request of ``fn`` reserves against a tokens-per-minute limit."""
    if isinstance(fn, ChatCompletionFn):
        return fn.reserved_tokens(sampling_kwargs)
    options = getattr(fn, "extra_options", None) or {}
    return int(options.get("max_tokens") or sampling_kwargs.get("max_tokens") or 0)


def recorded_prompt(fn: CompletionFn, prompt: Any) -> Any:
    """The prompt as ``fn``'s ``sampling`` event holds it: what a resumed run compares, call by call."""
    evals_fn = _EVALS_FNS.get(type(fn).__call__)
    if evals_fn is not None:
        return evals_fn[0](raw_prompt=prompt).to_formatted_prompt()
    return chat_messages(prompt) if isinstance(fn, ChatCompletionFn) else prompt


def single_try(fn: CompletionFn, timeout_s: float) -> SeatFn:
    """A callable like ``fn`` that makes at most one request, for a call of deadline ``timeout_s``."""
    evals_fn = _EVALS_FNS.get(type(fn).__call__)  # exactly evals' own __call__, not a subclass's
    if evals_fn is not None:
        return _evals_one_try(fn, timeout_s, *evals_fn)
    if isinstance(fn, ChatCompletionFn):
        return lambda prompt, **kwargs: fn(prompt, **kwargs, request_timeout_s=request_timeout(timeout_s),
                                           connect_timeout_s=timeout_s)
    return fn


def reply_text(result: CompletionResult, player: str) -> str:
    """The reply a seat call keeps of a fn's result: its first completion, ``""`` for a null one (like a
    null content, a rule break). No completion at all is the endpoint's fault (``NotACompletion``),
    raised inside the try so the engine retries it and the breaker counts it."""
    completions = result.get_completions()
    if not completions:
        raise NotACompletion(f"the completion fn of {player} returned no completions")
    return "" if completions[0] is None else completions[0]


def seat_send(fn: CompletionFn, timeout_s: float, player: str) -> Callable[..., str]:
    """``fn`` as one try of a seat call (``single_try``) that gives the reply's text (``reply_text``):
    the ``send`` of a ``calls.seat_call.SeatCall``."""
    one_try = single_try(fn, timeout_s)

    def send(prompt: Any, **kwargs: Any) -> str:
        text = reply_text(one_try(prompt, **kwargs), player)
        call = seat_call.current()
        if call is not None and call.recorded_by and not call.recorded:
            # a fn of the user's that records nothing: the log gets its call all the same, here inside
            # the try, so the recorder has it on disk before the call counts as answered (a kill -9
            # loses only calls in flight) and an answer that comes after the deadline is still logged
            record_sampling(prompt=prompt, sampled=[text], model=call.tag["player"],
                            recorded_by=call.recorded_by)
        return text

    return send


def answered_send(answer: Callable[[], CompletionResult], player: str) -> Callable[..., str]:
    """The ``send`` of a seat call whose answer is in hand already (a batch's line): ``answer()``
    makes the fn's result of it, recorded as a sent call's is; the reply's text as ``seat_send``'s."""
    def send(_prompt: Any, **_kwargs: Any) -> str:
        return reply_text(answer(), player)

    return send
