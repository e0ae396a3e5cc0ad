"""``econarena/chat``: any chat model behind any OpenAI-compatible endpoint.

evals 3.0.1.post1 sends every model name it does not know (gpt-4o, o-series, local models) to the
legacy ``/v1/completions`` endpoint, builds a new client for every call, and records usage in a
form that crashes its own report. This completion fn always calls ``/v1/chat/completions``, keeps
one thread-safe client per (base URL, key, timeout) per process, records flat usage, and knows
reasoning models: no ``temperature`` where the model refuses one, ``max_completion_tokens``
instead of ``max_tokens``, and an optional ``reasoning_effort``.

Configure with ``--completion_args model=NAME[,api_base=URL][,reasoning_effort=low]`` or the
environment (``ECONARENA_MODEL``, ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``); or name the
model in the completion fn itself: ``econarena/chat:NAME`` (see ``econarena_evals_hook``). Any
other completion arg goes into the request as it is, if the openai client's ``create()`` takes it
(the eval refuses one it does not before the first call: ``endpoints.check_args``, whose closest
names come from this fn's own args and ``create()``'s); a JSON object or array given as a string
(``response_format={"type":"json_object"}``, or ``@file.json``) is sent as that object, and
``extra_headers`` as HTTP headers (docs/configuration.md, "Completion args").
"""
from __future__ import annotations

import os
import re
import threading
from typing import Any, Optional

from evals.api import CompletionFn, CompletionResult
from evals.record import record_sampling

from ..calls import seat_call
from ..calls.errors import NotACompletion, RetryNow
from .completion_args import chat_arg_refusal, check_values, decode_args, keyword_names, prices_arg, typed_options
from .reply_bytes import http_client as reply_bytes_client
from .reply_bytes import said
from .usage import usage_fields

# Names of OpenAI reasoning models: they take max_completion_tokens, and only the default temperature.
REASONING_MODEL = re.compile(r"^(o\d+|gpt-5)([-.].*)?$")
REASONING_EFFORTS = {"minimal", "low", "medium", "high"}

_clients: dict[tuple[Any, ...], Any] = {}
OWN_TIMEOUT_S = 600.0  # the request timeout of econarena/chat called outside the eval (the openai client's)
_clients_lock = threading.Lock()


def shared_client(base_url: Optional[str], api_key: Optional[str], timeout_s: float, max_retries: int,
                  azure: Optional[tuple[str, str, str]] = None, connect_s: Optional[float] = None,
                  max_reply_bytes: Optional[int] = None):
    """One client per endpoint per process: building one costs ~24 ms of CPU, and httpx pools connections.

    ``azure``: (endpoint, deployment, api-version) for Azure OpenAI, whose URLs name the deployment
    (``/openai/deployments/<deployment>/chat/completions?api-version=...``) and whose key goes in
    an ``api-key`` header; the openai client's ``AzureOpenAI`` builds both. ``connect_s``: a
    shorter timeout for connecting than for the answer (which may wait in a server's queue).
    ``max_reply_bytes``: the most a completion's body may hold (``reply_bytes.MAX_REPLY_BYTES``).
    """
    from openai import AzureOpenAI, OpenAI, Timeout

    key = (base_url, api_key, timeout_s, azure, connect_s, max_reply_bytes)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            if connect_s is not None:
                timeout_s = Timeout(timeout_s, connect=min(connect_s, timeout_s))  # type: ignore[assignment]
            if azure is not None:
                endpoint, deployment, version = azure
                client = AzureOpenAI(azure_endpoint=endpoint, azure_deployment=deployment, api_version=version,
                                     api_key=api_key, timeout=timeout_s, max_retries=max_retries,
                                     http_client=reply_bytes_client(max_reply_bytes))
            else:
                # The openai client appends its routes to the base URL as a string, so a gateway's
                # query (``/v1?key=...``) would end up before the route (``/v1/?key=...chat/completions``):
                # the query goes into every request as a query of its own instead.
                base, query = split_query(base_url)
                client = OpenAI(base_url=base, api_key=api_key, timeout=timeout_s, max_retries=max_retries,
                                default_query=query or None, http_client=reply_bytes_client(max_reply_bytes))
            _clients[key] = client
        return client


def split_query(base_url: Optional[str]) -> tuple[Optional[str], dict[str, str]]:
    """A base URL without its query string, and that query's parameters."""
    if not base_url or "?" not in base_url:
        return base_url, {}
    from urllib.parse import parse_qsl

    base, _, query = base_url.partition("?")
    return base, dict(parse_qsl(query, keep_blank_values=True))


def reply_of(response: Any, field: str = "message") -> tuple[str, Optional[str]]:
    """(the first reply's text, its finish_reason) of a parsed chat completion (``field="text"``:
    a legacy completion). A null content is an empty reply (the model's, a rule break); a body
    with no choices, a choice with no message, or content that is not text is ``NotACompletion``."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        what = "no choices" if choices is None else f"choices: {choices!r}"[:60]
        raise NotACompletion(f"HTTP 200 but not a completion: {what}")
    first = choices[0]
    if field == "message":
        message = getattr(first, "message", None)
        if message is None:
            raise NotACompletion("HTTP 200 but not a completion: its choice has no message")
        content = getattr(message, "content", None)
    else:
        content = getattr(first, field, None)
    if content is not None and not isinstance(content, str):
        raise NotACompletion(f"HTTP 200 but not a completion: its {field} content is a {type(content).__name__}, not text")
    return content or "", getattr(first, "finish_reason", None)


def _flag(value: Any) -> Optional[bool]:
    """'auto'/None -> None; yes/no strings from --completion_args -> bool."""
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"auto", ""}:
        return None
    return text in {"1", "true", "yes", "on"}


def yes_no(name: str, value: Any) -> bool:
    """A yes/no completion arg; anything else is refused, not taken for no."""
    text = str(value).strip().lower()
    if isinstance(value, bool) or text in {"1", "true", "yes", "on", "0", "false", "no", "off"}:
        return value if isinstance(value, bool) else text in {"1", "true", "yes", "on"}
    raise ValueError(f"completion arg {name} must be yes or no, got {value!r}")


def chat_messages(prompt: Any) -> list[dict[str, str]]:
    """The messages ``econarena/chat`` sends (and records) for a prompt: a text, or chat messages."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [{"role": m["role"], "content": m["content"]} for m in prompt]


class ChatResult(CompletionResult):
    def __init__(self, text: str, raw: Any = None) -> None:
        self.text, self.raw = text, raw

    def get_completions(self) -> list[str]:
        return [self.text]


class ChatCompletionFn(CompletionFn):
    def __init__(
        self,
        model: Optional[str] = None,
        api_base: Optional[str] = None,
        api_key: Optional[str] = None,
        api_key_env: Optional[str] = None,
        reasoning: Any = "auto",
        reasoning_effort: Optional[str] = None,
        temperature: Optional[float] = None,
        max_tokens: Optional[int] = None,
        max_completion_tokens: int = 16384,
        request_timeout_s: Optional[float] = None,
        max_retries: int = 0,
        max_reply_mib: Optional[float] = None,
        azure_endpoint: Optional[str] = None,
        azure_deployment: Optional[str] = None,
        api_version: Optional[str] = None,
        batch: Any = "no",
        batch_poll_s: Optional[float] = None,
        batch_fallback: Any = "no",
        registry: Any = None,
        prices: Any = None,
        **extra_options: Any,
    ) -> None:
        self.model = model or azure_deployment or os.environ.get("ECONARENA_MODEL")
        if not self.model:
            # a mistyped arg first (modle=...): it is likelier the cause than a model left out
            unknown = chat_arg_refusal(extra_options, keyword_names(ChatCompletionFn.__init__, named_only=True) or ())
            raise ValueError(
                (f"{unknown}; and " if unknown else "")
                + "econarena/chat needs a model: --completion_args model=NAME, econarena/chat:NAME, "
                "or ECONARENA_MODEL=NAME"
            )
        # Azure OpenAI: an endpoint (argument or AZURE_OPENAI_ENDPOINT) and an api-version (argument
        # or OPENAI_API_VERSION); the deployment is azure_deployment, else the model name.
        endpoint = azure_endpoint or (None if api_base else os.environ.get("AZURE_OPENAI_ENDPOINT"))
        self.azure: Optional[tuple[str, str, str]] = None
        if endpoint:
            version = api_version or os.environ.get("OPENAI_API_VERSION")
            if not version:
                raise ValueError("Azure OpenAI needs an api-version: --completion_args api_version=2024-10-21, "
                                 "or OPENAI_API_VERSION")
            self.azure = (str(endpoint), str(azure_deployment or self.model), str(version))
            api_key = api_key or os.environ.get("AZURE_OPENAI_API_KEY")
        if api_key_env is not None and api_key is None:
            # a roster file names the variable that holds the key (never the key): read here, at start
            api_key = os.environ.get(str(api_key_env)) or None
            if api_key is None:
                raise ValueError(f"econarena/chat ({self.model}): the key's environment variable {api_key_env} "
                                 "is not set")
        self.api_base = None if self.azure else (api_base or os.environ.get("OPENAI_BASE_URL") or None)
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if self.api_key is None and self.api_base is not None:
            self.api_key = "no-key"  # local servers accept anything; the openai client insists on a value
        forced = _flag(reasoning)
        self.reasoning_forced = forced  # None: told by the model's name
        self.reasoning = bool(REASONING_MODEL.match(self.model)) if forced is None else forced
        if reasoning_effort is not None and reasoning_effort not in REASONING_EFFORTS:
            raise ValueError(f"reasoning_effort must be one of {sorted(REASONING_EFFORTS)}, got {reasoning_effort!r}")
        self.reasoning_effort = reasoning_effort
        # Values from the command line arrive as strings: JSON objects and arrays become objects, and
        # numbers outside their domain (temperature=nan, max_tokens=0) are refused before any call.
        extra_options = typed_options(check_values(decode_args(extra_options)))
        own = check_values({"temperature": temperature, "max_tokens": max_tokens,
                            "max_completion_tokens": max_completion_tokens,
                            "request_timeout_s": request_timeout_s, "max_retries": max_retries,
                            "max_reply_mib": max_reply_mib})
        # the most a reply's body may hold, compressed or inflated (``reply_bytes``)
        mib = own["max_reply_mib"]
        self.max_reply_bytes = None if mib is None else max(1, int(float(mib) * 2**20))
        self.temperature = own["temperature"]
        self.max_tokens = own["max_tokens"]
        self.max_completion_tokens = own["max_completion_tokens"]
        self._lock = threading.Lock()
        # None: the eval's timeout (``calls.policy.request_timeout``), or OWN_TIMEOUT_S called outside it
        self.request_timeout_s = None if own["request_timeout_s"] is None else float(own["request_timeout_s"])
        # Retries belong to the eval's call policy (bounded, with a deadline); the client adds none.
        self.max_retries = own["max_retries"]
        headers = extra_options.pop("extra_headers", None) or {}
        if not isinstance(headers, dict):
            raise ValueError(f"extra_headers must be a JSON object of header names and values, got {headers!r}")
        self.extra_headers = {str(k): str(v) for k, v in headers.items()}
        self.extra_options = extra_options
        # Batch mode (docs/batch.md): the eval sends this fn's seat calls through the endpoint's
        # batch API, a wave of every session at a time; the fn itself still answers synchronously.
        self.batch = yes_no("batch", batch)
        if self.batch and self.azure:
            raise ValueError("batch=yes: econarena/chat's batch mode speaks OpenAI's /v1/batches; "
                             "Azure OpenAI's batch deployments are not supported")
        poll = check_values({"batch_poll_s": batch_poll_s})["batch_poll_s"]
        self.batch_poll_s = 60.0 if poll is None else float(poll)  # the longest pause between two looks
        self.batch_fallback = yes_no("batch_fallback", batch_fallback)  # lines no batch answered go synchronously
        # {input: X, output: Y} per million tokens (a roster file's): the plan line's cost, never sent
        self.prices: Optional[tuple[float, float]] = None if prices is None else prices_arg(prices)

    def request(self, messages: list[dict[str, str]], **kwargs: Any) -> dict[str, Any]:
        """The body of the chat completions request for these messages and eval kwargs."""
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        temperature = self.temperature if self.temperature is not None else kwargs.pop("temperature", None)
        max_tokens = self.max_tokens if self.max_tokens is not None else kwargs.pop("max_tokens", None)
        kwargs.pop("temperature", None)
        kwargs.pop("max_tokens", None)
        if self.reasoning:
            # Reasoning models reject any temperature but the default, and count hidden reasoning
            # against max_completion_tokens: the eval's answer budget (max_tokens) is far too small.
            body["max_completion_tokens"] = self.max_completion_tokens
            if self.reasoning_effort:
                body["reasoning_effort"] = self.reasoning_effort
        else:
            if temperature is not None:
                body["temperature"] = temperature
            if max_tokens is not None:
                body["max_tokens"] = int(max_tokens)
        body.update(kwargs)
        body.update(self.extra_options)
        return body

    def reserved_tokens(self, sampling_kwargs: dict[str, Any]) -> int:
        """Completion tokens a request reserves against a tokens-per-minute limit."""
        if self.reasoning:
            return self.max_completion_tokens
        return int(self.max_tokens or sampling_kwargs.get("max_tokens") or 0)

    def _create(self, client: Any, messages: list[dict[str, str]], kwargs: dict[str, Any]) -> Any:
        """Create the completion. A model that refuses temperature or max_tokens is remembered as a
        reasoning model, and the eval's call policy sends the request again as one: that second
        request is a try of its own (``RetryNow``)."""
        import openai

        body = self.request(messages, **kwargs)
        headers = {"extra_headers": self.extra_headers} if self.extra_headers else {}
        try:
            response = client.chat.completions.with_raw_response.create(**body, **headers)
            seat_call.heard(response.headers)  # its lane learns the key's stated limits
            return response.parse()
        except openai.APIConnectionError as exc:
            told = said(exc)  # the openai client's connection error, saying why if a reply was too large
            if told is exc:
                raise
            raise told from exc.__cause__
        except openai.BadRequestError as exc:
            message = str(exc).lower()
            refused = ("temperature" in message or "max_tokens" in message) and (
                "unsupported" in message or "not support" in message or "max_completion_tokens" in message
            )
            sent_plain = "temperature" in body or "max_tokens" in body
            if not (refused and sent_plain):
                raise
            with self._lock:
                self.reasoning = True
            raise RetryNow(f"{self.model} refused temperature/max_tokens; asking again as a reasoning model") from exc

    def batch_request(self, prompt: Any, **kwargs: Any) -> tuple[list[dict[str, str]], dict[str, Any]]:
        """(messages, body): the body is exactly what ``__call__`` would send for this prompt."""
        for transport_only in ("request_timeout_s", "connect_timeout_s"):
            kwargs.pop(transport_only, None)
        messages = chat_messages(prompt)
        return messages, self.request(messages, **kwargs)

    def answer(self, messages: list[dict[str, str]], response: Any, **recorded: Any) -> ChatResult:
        """The reply of a parsed chat completion, recorded as a ``sampling`` event: the same whether
        the response came by a request of its own or from a batch's output file."""
        text, finish = reply_of(response)
        extra: dict[str, Any] = usage_fields(response.usage) if getattr(response, "usage", None) is not None else {}
        extra["finish_reason"] = finish
        model = getattr(response, "model", None)
        if model and model != self.model:
            extra["requested_model"] = self.model  # a server that answers any name says which model it ran
        record_sampling(prompt=messages, sampled=[text], model=model or self.model, **extra, **recorded)
        return ChatResult(text, response)

    def __call__(self, prompt: Any, **kwargs: Any) -> ChatResult:
        messages = chat_messages(prompt)
        # The eval passes its timeouts (``calls.policy.request_timeout``: a healthy server's queue may be
        # long, the eval's own deadline ends a silent one); a request_timeout_s given to the fn caps them.
        timeouts = [float(t) for t in (self.request_timeout_s, kwargs.pop("request_timeout_s", None)) if t is not None]
        timeout_s = min(timeouts) if timeouts else OWN_TIMEOUT_S
        connect_s = kwargs.pop("connect_timeout_s", None)
        client = shared_client(self.api_base, self.api_key, timeout_s, self.max_retries, self.azure,
                               None if connect_s is None else float(connect_s), self.max_reply_bytes)
        return self.answer(messages, self._create(client, messages, kwargs))
