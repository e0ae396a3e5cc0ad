"""Seat calls to an OpenAI-compatible chat endpoint, made the way the evals plugin makes them: one
request per try through the openai client (its own retries off), tried, retried, paced and stopped
by ``calls`` (``call_all``: the lane of (endpoint, key, model) paces to the limits the answers
state, waits out a 429 as the server asks, and stops the run at a quota or auth error).

inspect_ai is async; the call engine is threaded: each call waits for its answer on a thread of
its own (``Endpoint.ask``), so inspect's event loop never blocks.
"""
from __future__ import annotations

import hashlib
import os
import sys
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Optional

import anyio
import openai

from ..calls import seat_call
from ..calls.dispatch import call_all
from ..calls.errors import NotACompletion, RunStopped
from ..calls.policy import CallPolicy, request_timeout
from ..calls.state import CallState

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Threads that wait for calls: as many as the call engine lets be in flight (its cap), so the
# lanes, not a thread pool, decide how many requests are out.
WAITERS = anyio.CapacityLimiter(CallPolicy.max_concurrency)


@dataclass
class Reply:
    text: str
    finish_reason: Optional[str]
    usage: Optional[Any]
    model: str


def first_reply(raw: Any) -> tuple[str, Optional[str]]:
    """(text, finish_reason) of a parsed chat completion; a body that is no completion raises
    ``NotACompletion`` (an endpoint error, retried), a null content is an empty reply (a rule break)."""
    choices = getattr(raw, "choices", None)
    if not isinstance(choices, list) or not choices or getattr(choices[0], "message", None) is None:
        raise NotACompletion("HTTP 200 but not a completion: no choice with a message")
    content = getattr(choices[0].message, "content", None)
    if content is not None and not isinstance(content, str):
        raise NotACompletion(f"HTTP 200 but not a completion: its content is a {type(content).__name__}, not text")
    return content or "", getattr(choices[0], "finish_reason", None)


class Endpoint:
    """One model at one endpoint with one key: its requests share one lane.

    Its calls are those of ``call_state``, the run's they belong to: the front end that makes the
    endpoints hands one down to share (the verifiers env: every seat's endpoint), else the endpoint
    owns one of its own, with ``policy`` (inspect: one model's calls)."""

    _told_stop = threading.Lock()
    _stops_said: "weakref.WeakSet[CallState]" = weakref.WeakSet()  # the stop line is said once per call state
    RESUME = "`inspect eval-retry LOG` plays what is missing"  # how the front end plays what a stop left

    def __init__(self, model: str, base_url: Optional[str], api_key: Optional[str],
                 policy: Optional[CallPolicy] = None, call_state: Optional[CallState] = None,
                 **options: Any) -> None:
        if call_state is None:
            call_state = CallState(policy or CallPolicy())
        elif policy is not None and policy != call_state.policy:
            raise ValueError("an endpoint's calls follow the policy of the call state they belong to")
        policy = call_state.policy
        self.call_state = call_state
        self.model, self.policy, self.options = model, policy, options
        self.base_url = str(base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        key = api_key or os.environ.get("OPENAI_API_KEY") or ""
        # the plugin's lane key for the same endpoint, key and model (fns.endpoints.lane_key)
        self.lane = (self.base_url, hashlib.sha256(key.encode()).hexdigest()[:16], model)
        self.client = openai.OpenAI(base_url=self.base_url, api_key=key or "none", max_retries=0,
                                    timeout=openai.Timeout(request_timeout(policy.call_timeout_s),
                                                           connect=policy.call_timeout_s))

    def _try(self, body: dict[str, Any]) -> Reply:
        response = self.client.chat.completions.with_raw_response.create(**body)
        seat_call.heard(response.headers)  # the lane learns the key's stated limits
        raw = response.parse()
        text, finish = first_reply(raw)
        return Reply(text, finish, getattr(raw, "usage", None), str(getattr(raw, "model", None) or self.model))

    def call(self, messages: list[dict[str, str]], **sampling: Any) -> Reply:
        """One seat call, blocking: tried and retried under the call policy; raises its last error."""
        body = {"model": self.model, "messages": messages,
                **{k: v for k, v in {**sampling, **self.options}.items() if v is not None}}
        # what the request reserves against a tokens-per-minute limit: prompt (~4 chars a token) + max_tokens
        cost = sum(len(m["content"]) for m in messages) / 4 + int(body.get("max_tokens") or 0)
        # a seat call, so that its lane hears the answer's headers (``seat_call.heard``)
        call = seat_call.SeatCall(tag={}, prompt=body, kwargs={}, send=self._try)
        calls = self.call_state
        result = call_all(calls, [(self, call)], [self.lane], [cost])[0]
        if isinstance(result, BaseException):
            if calls.stop_reason:
                self._say_stop()
                raise RunStopped(calls.stop_reason) from (None if isinstance(result, RunStopped) else result)
            raise result
        return result

    async def ask(self, messages: list[dict[str, str]], **sampling: Any) -> Reply:
        return await anyio.to_thread.run_sync(lambda: self.call(messages, **sampling), limiter=WAITERS)

    def _say_stop(self) -> None:
        calls = self.call_state
        with self._told_stop:
            if calls in self._stops_said:
                return
            self._stops_said.add(calls)
        print(f"econarena: stopped: {calls.stop_reason}; {self.RESUME}", file=sys.stderr, flush=True)
