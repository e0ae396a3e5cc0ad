"""A real OpenAI-compatible HTTP server on 127.0.0.1 for end-to-end tests and benchmarks.

It speaks ``GET /v1/models``, ``POST /v1/chat/completions`` and ``POST /v1/completions`` and answers
with a deterministic policy of the prompt text. It records every request so tests can prove which
endpoint was called. Usage is sent the way today's API sends it, with nested detail objects.
"""
from __future__ import annotations

import collections
import json
import random
import re
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional

Policy = Callable[[str], str]
# (index of the POST from 0, the answer the server would give) -> (status, body, headers) it gives
Answer = Callable[[int, dict[str, Any]], tuple[int, Any, dict[str, str]]]


def with_reply(payload: dict[str, Any], text: Any) -> dict[str, Any]:
    """A chat completion answer whose first reply is ``text``, however long or odd (no token limit)."""
    choice = {**payload["choices"][0], "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
    return {**payload, "choices": [choice]}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # hundreds of seat calls connect at once; the default backlog is 5


def is_reasoning_name(model: str) -> bool:
    return model.startswith(("o1", "o3", "o4", "gpt-5"))


def nested_usage(prompt_chars: int, completion_chars: int, reasoning_tokens: int = 0) -> dict[str, Any]:
    prompt_tokens, completion_tokens = max(1, prompt_chars // 4), max(1, completion_chars // 4) + reasoning_tokens
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


@dataclass(frozen=True)
class Faults:
    """What share of POSTs go wrong, and how. Draws come from a seeded generator."""

    http_500: float = 0.0
    http_429: float = 0.0
    truncated: float = 0.0  # a 200 whose JSON body is cut short
    slow: float = 0.0  # answered correctly, after slow_s more
    slow_s: float = 0.3
    seed: int = 0


class RateLimiter:
    """Rate limits the way the OpenAI API applies them, as its documentation states.

    Two token buckets (requests, tokens) refilled continuously at the per-minute limit, each
    holding one second's worth (limits are enforced over short periods: 600/min is 10/s). A request
    reserves its prompt tokens (chars / 4) plus its ``max_tokens``. A refused request still uses a
    request from the bucket, so resending at once makes things worse. Answers carry
    ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``; a refusal is HTTP 429 with code
    ``rate_limit_exceeded``, "Please try again in ...", ``retry-after`` and ``retry-after-ms``.
    After ``quota_requests`` answered requests, every request gets 429 ``insufficient_quota``.
    """

    def __init__(self, rpm: Optional[float] = None, tpm: Optional[float] = None,
                 quota_requests: Optional[int] = None, default_max_tokens: int = 4096) -> None:
        self.rpm, self.tpm, self.quota = rpm, tpm, quota_requests
        self.default_max_tokens = default_max_tokens
        now = time.monotonic()
        self.requests_left = rpm / 60 if rpm else 0.0
        self.tokens_left = tpm / 60 if tpm else 0.0
        self.t = now
        self.lock = threading.Lock()
        self.answered = self.refused = self.quota_refused = 0
        self.first_quota_refusal: Optional[int] = None  # index of the request that got it
        self.count = 0

    def _refill(self, now: float) -> None:
        dt, self.t = now - self.t, now
        if self.rpm:
            self.requests_left = min(self.rpm / 60, self.requests_left + dt * self.rpm / 60)
        if self.tpm:
            self.tokens_left = min(self.tpm / 60, self.tokens_left + dt * self.tpm / 60)

    def _headers(self) -> dict[str, str]:
        h: dict[str, str] = {}
        for kind, limit, left in (("requests", self.rpm, self.requests_left), ("tokens", self.tpm, self.tokens_left)):
            if limit:
                h[f"x-ratelimit-limit-{kind}"] = str(int(limit))
                h[f"x-ratelimit-remaining-{kind}"] = str(max(0, int(left)))
                missing = max(0.0, limit / 60 - left)
                h[f"x-ratelimit-reset-{kind}"] = f"{max(1, round(missing / (limit / 60) * 1000))}ms"
        return h

    def admit(self, body: dict[str, Any]) -> tuple[Optional[tuple[int, dict[str, Any]]], dict[str, str]]:
        """(None, headers) to answer; ((status, error body), headers) to refuse."""
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", [])) or str(body.get("prompt", ""))
        cost = len(text) / 4 + int(body.get("max_tokens") or body.get("max_completion_tokens") or self.default_max_tokens)
        with self.lock:
            self.count += 1
            now = time.monotonic()
            self._refill(now)
            if self.quota is not None and self.answered >= self.quota:
                self.quota_refused += 1
                if self.first_quota_refusal is None:
                    self.first_quota_refusal = self.count
                return (429, {"error": {"message": "You exceeded your current quota, please check your plan and "
                                        "billing details.", "type": "insufficient_quota", "param": None,
                                        "code": "insufficient_quota"}}), {}
            short = []
            if self.rpm and self.requests_left < 1:
                short.append(("requests", "RPM", (1 - self.requests_left) / (self.rpm / 60)))
            if self.tpm and self.tokens_left < cost:
                short.append(("tokens", "TPM", (cost - self.tokens_left) / (self.tpm / 60)))
            if short:
                self.refused += 1
                if self.rpm:  # a refused request counts against the limit too
                    self.requests_left = max(-self.rpm / 60, self.requests_left - 1)
                kind, unit, wait = max(short, key=lambda k: k[2])
                wait = max(wait, 0.001)
                headers = self._headers()
                headers["retry-after-ms"] = str(int(wait * 1000) + 1)
                headers["retry-after"] = str(max(1, int(wait + 0.999)))
                limit = self.rpm if kind == "requests" else self.tpm
                return (429, {"error": {
                    "message": f"Rate limit reached for gpt-4o in organization org-test on {kind} per min ({unit}): "
                               f"Limit {int(limit)}. Please try again in {int(wait * 1000) + 1}ms.",
                    "type": kind, "param": None, "code": "rate_limit_exceeded"}}), headers
            if self.rpm:
                self.requests_left -= 1
            if self.tpm:
                self.tokens_left -= cost
            self.answered += 1
            return None, self._headers()


def _rfc3339(seconds_from_now: float) -> str:
    at = time.time() + seconds_from_now
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1000):03d}Z"


def anthropic_answer(rpm: int, tokens: int, overloaded: tuple[int, ...] = (), limited: tuple[int, ...] = ()) -> Answer:
    """Answers in the shapes Anthropic's API documents, for ``OpenAIServer(answer=...)``.

    Every answer states the key's limits in ``anthropic-ratelimit-{requests,tokens,input-tokens,
    output-tokens}-{limit,remaining,reset}`` (resets as RFC 3339 times; the output-token limit is the
    most restrictive, ``tokens`` at twice it). The POSTs numbered in ``overloaded`` get 529
    ``{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}``; those in
    ``limited`` a 429 ``rate_limit_error`` with ``retry-after`` in seconds and nothing remaining."""
    def headers(remaining: int) -> dict[str, str]:
        h = {}
        for kind, limit in (("requests", rpm), ("tokens", 2 * tokens), ("input-tokens", 2 * tokens),
                            ("output-tokens", tokens)):
            h[f"anthropic-ratelimit-{kind}-limit"] = str(limit)
            h[f"anthropic-ratelimit-{kind}-remaining"] = str(remaining if kind == "requests" else remaining * 1000)
            h[f"anthropic-ratelimit-{kind}-reset"] = _rfc3339(1.0)
        return h

    def answer(n: int, payload: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        if n in overloaded:
            return 529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"},
                         "request_id": f"req_{n}"}, {}
        if n in limited:
            return 429, {"type": "error", "error": {
                "type": "rate_limit_error",
                "message": f"This request would exceed your organization's rate limit of {rpm} requests per minute."},
                "request_id": f"req_{n}"}, {**headers(0), "retry-after": "1"}
        return 200, payload, headers(rpm // 2)

    return answer


def google_answer(exhausted: tuple[int, ...] = (), wrapped: tuple[int, ...] = (), retry_delay: str = "1s") -> Answer:
    """Answers in the shapes Google's Gemini API documents, for ``OpenAIServer(answer=...)``: the
    POSTs numbered in ``exhausted`` get 429 ``RESOURCE_EXHAUSTED`` worded as a quota, with a
    ``google.rpc.QuotaFailure`` and a ``google.rpc.RetryInfo`` (``retryDelay``) in ``details``;
    those also in ``wrapped`` send that body in a list, ``[{"error": {...}}]``, as its
    OpenAI-compatible endpoint does. No rate-limit headers: Google sends none."""
    def answer(n: int, payload: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        if n not in exhausted:
            return 200, payload, {}
        error = {"error": {
            "code": 429, "status": "RESOURCE_EXHAUSTED",
            "message": "You exceeded your current quota, please check your plan and billing details. For more "
                       "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                    "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                    "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay}]}}
        return 429, ([error] if n in wrapped else error), {}

    return answer


ROUTES = ("chat/completions", "completions", "models")


def route(raw_path: str) -> str:
    """The route of a request path, without its query string. A base URL with a query of its own
    (a gateway's ``/v1?key=...``) reaches the server as the openai client builds it: the route
    appended to the query (``/v1/?key=...chat/completions``); that route is the one answered."""
    path, _, query = raw_path.partition("?")
    for name in ROUTES:
        if "/" in query and query.endswith(name):
            return path.rstrip("/") + "/" + name
    return path.rstrip("/") if path != "/" else path


class FifoSlots:
    """``n`` slots handed out in arrival order, as a server's queue does (``threading.Semaphore``
    lets a newcomer take a slot before the requests already waiting)."""

    def __init__(self, n: int) -> None:
        self.free = n
        self.lock = threading.Lock()
        self.queue: "collections.deque[threading.Event]" = collections.deque()

    def __enter__(self) -> None:
        with self.lock:
            if self.free and not self.queue:
                self.free -= 1
                return
            turn = threading.Event()
            self.queue.append(turn)
        turn.wait()  # the slot is handed over by the request that frees it

    def __exit__(self, *exc: object) -> None:
        with self.lock:
            if self.queue:
                self.queue.popleft().set()
            else:
                self.free += 1


class OpenAIServer:
    def __init__(self, policy: Policy, models: tuple[str, ...] = ("gpt-4",), latency_s: float = 0.0,
                 faults: Faults = Faults(), plain_usage: bool = False, limiter: Optional[RateLimiter] = None,
                 azure_key: Optional[str] = None, answer_model: Optional[str] = None,
                 answer: Optional[Answer] = None, slots: Optional[int] = None, decode_s: float = 0.0) -> None:
        self.policy = policy
        # what a misbehaving server makes of each answer: a body that is no completion, a 429 that
        # asks for a day's wait, a reply of any size (the policy's answers are cut at max_tokens)
        self.answer = answer
        self.posts = 0
        # A server that decodes ``slots`` requests at a time, ``decode_s`` each (llama.cpp's slots,
        # OLLAMA_NUM_PARALLEL): the others wait in its queue, in the order they came
        self.slots = FifoSlots(slots) if slots else None
        self.decode_s = decode_s
        self.most_decoding = 0  # the most requests decoding at once, to prove the slots held
        self.most_held = 0  # the most requests in the server at once: decoding or in its queue
        self._decoding = self._held = 0
        self.limiter = limiter
        # Azure OpenAI's shape: POST /openai/deployments/<deployment>/chat/completions?api-version=...
        # with the key in an api-key header; anything else is refused as Azure refuses it
        self.azure_key = azure_key
        # the model every response names, whatever was asked (llama.cpp's server names its model file)
        self.answer_model = answer_model
        self.plain_usage = plain_usage  # usage as llama.cpp sends it: no *_details objects
        self.models = models
        self.latency_s = latency_s
        self.faults = faults
        self._fault_rng = random.Random(faults.seed)
        self.injected: dict[str, int] = {"500": 0, "429": 0, "truncated": 0, "slow": 0}
        self.requests: list[dict[str, Any]] = []
        self.seen: list[tuple[str, str, Optional[str]]] = []  # (method, path, Authorization) of every request
        self._lock = threading.Lock()
        self._server: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> "OpenAIServer":
        handler = self._handler_class()
        self._server = _Server(("127.0.0.1", 0), handler)
        # stop() waits for the serve loop to look up: at the default 0.5 s each test server costs that much
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def answered(self, since: int = 0) -> int:
        """Whole answers sent (the calls an API would bill) among requests ``since`` onwards."""
        with self._lock:
            return sum(1 for r in self.requests[since:] if r.get("answered"))

    def in_flight(self, at: float, since: int = 0, until: Optional[int] = None) -> int:
        """Requests (of ``since:until``) not yet answered at ``at``, a perf_counter time: received
        then, or later (sent before a stop, on the wire at it). What a stop at ``at`` caught in flight."""
        with self._lock:
            return sum(1 for r in self.requests[since:until] if r.get("done", float("inf")) >= at)

    def usage_sent(self, model: str) -> dict[str, int]:
        """The tokens this server billed ``model``'s answered calls, as its usage said: prompt,
        completion and reasoning tokens, and the calls."""
        with self._lock:
            sent = [r["usage"] for r in self.requests if r.get("answered") and r["body"].get("model") == model]
        return {"calls": len(sent),
                "prompt_tokens": sum(u["prompt_tokens"] for u in sent if u),
                "completion_tokens": sum(u["completion_tokens"] for u in sent if u),
                "reasoning_tokens": sum((u.get("completion_tokens_details") or {}).get("reasoning_tokens", 0)
                                        for u in sent if u)}

    def paths(self) -> list[str]:
        with self._lock:
            return [r["path"] for r in self.requests]

    def bodies(self, model: str) -> list[tuple[str, dict[str, Any]]]:
        """(path, body) of every request made for ``model``."""
        with self._lock:
            return [(r["path"], r["body"]) for r in self.requests if r["body"].get("model") == model]

    def draw_fault(self) -> Optional[str]:
        f = self.faults
        with self._lock:
            x = self._fault_rng.random()
            for name, share in (("500", f.http_500), ("429", f.http_429), ("truncated", f.truncated), ("slow", f.slow)):
                if x < share:
                    self.injected[name] += 1
                    return name
                x -= share
        return None

    def decode(self) -> None:
        """Wait for a free slot, then hold it for ``decode_s``."""
        assert self.slots is not None
        with self._lock:
            self._held += 1
            self.most_held = max(self.most_held, self._held)
        with self.slots:
            with self._lock:
                self._decoding += 1
                self.most_decoding = max(self.most_decoding, self._decoding)
            time.sleep(self.decode_s)
            with self._lock:
                self._decoding -= 1
                self._held -= 1

    def usage(self, prompt_chars: int, completion_chars: int, reasoning_tokens: int = 0) -> dict[str, Any]:
        usage = nested_usage(prompt_chars, completion_chars, reasoning_tokens)
        if self.plain_usage:
            usage = {k: v for k, v in usage.items() if not k.endswith("_details")}
        return usage

    def respond(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Status and JSON body for one POST."""
        model = str(body.get("model", ""))
        if path.endswith("/chat/completions"):
            if "temperature" in body and (model.startswith("strict-") or is_reasoning_name(model)):
                # what the OpenAI API says to a reasoning model given a temperature
                return 400, {"error": {
                    "message": "Unsupported parameter: 'temperature' is not supported with this model.",
                    "type": "invalid_request_error", "param": "temperature", "code": "unsupported_parameter"}}
            text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
            answer, finish = self.policy(text), "stop"
            limit = body.get("max_tokens")
            if isinstance(limit, int) and len(answer) > 4 * limit:  # cut off at the token limit, as a server does
                answer, finish = answer[: 4 * limit], "length"
            return 200, {
                "id": "chatcmpl-test", "object": "chat.completion", "created": 0,
                "model": self.answer_model or model or "unknown",
                "choices": [{"index": 0, "finish_reason": finish,
                             "message": {"role": "assistant", "content": answer}}],
                "usage": self.usage(len(text), len(answer), 7 if is_reasoning_name(model) else 0),
            }
        if path.endswith("/completions"):
            text = str(body.get("prompt", ""))
            answer = self.policy(text)
            return 200, {
                "id": "cmpl-test", "object": "text_completion", "created": 0,
                "model": self.answer_model or model or "unknown",
                "choices": [{"index": 0, "text": answer, "finish_reason": "stop", "logprobs": None}],
                "usage": self.usage(len(text), len(answer)),
            }
        return 404, {"error": {"message": "not found"}}

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out in separate writes; with Nagle on, the client's delayed ACK
            # adds 40 ms to every keep-alive response
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def _send(self, status: int, body: dict[str, Any], headers: Optional[dict[str, str]] = None) -> None:
                self._send_raw(status, json.dumps(body).encode(), headers)

            def _send_raw(self, status: int, raw: bytes, headers: Optional[dict[str, str]] = None) -> None:
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self) -> None:
                with server._lock:
                    server.seen.append(("GET", self.path, self.headers.get("Authorization")))
                if route(self.path).endswith("/models"):
                    self._send(200, {"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in server.models]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                record = {"path": self.path, "body": body, "t": time.perf_counter(), "headers": headers}
                with server._lock:
                    server.requests.append(record)
                    server.seen.append(("POST", self.path, self.headers.get("Authorization")))
                path = route(self.path)
                if server.azure_key is not None:
                    shape = re.fullmatch(r"/openai/deployments/[^/]+/chat/completions", path)
                    if not shape or "api-version=" not in self.path:
                        self._send(404, {"error": {"code": "404", "message": "Resource not found"}})
                        return
                    if self.headers.get("api-key") != server.azure_key:
                        self._send(401, {"error": {"code": "401", "message": "Access denied due to invalid "
                                                   "subscription key or wrong API endpoint."}})
                        return
                limit_headers: dict[str, str] = {}
                if server.limiter is not None:
                    refusal, limit_headers = server.limiter.admit(body)
                    if refusal is not None:
                        record["quota_refused"] = refusal[1]["error"]["code"] == "insufficient_quota"
                        self._send(*refusal, limit_headers)
                        record["done"] = time.perf_counter()
                        return
                if server.slots is not None:
                    server.decode()
                fault = server.draw_fault()
                delay = server.latency_s + (server.faults.slow_s if fault == "slow" else 0.0)
                if delay:
                    time.sleep(delay)
                if fault == "500":
                    self._send(500, {"error": {"message": "injected server error", "type": "server_error"}})
                elif fault == "429":
                    self._send(429, {"error": {"message": "injected rate limit", "type": "rate_limit_error"}})
                else:
                    status, payload = server.respond(path, body)
                    if server.answer is not None and status == 200:
                        with server._lock:
                            n, server.posts = server.posts, server.posts + 1
                        status, payload, extra = server.answer(n, payload)
                        limit_headers = {**limit_headers, **extra}
                    raw = json.dumps(payload).encode()
                    self._send_raw(status, raw[: len(raw) // 2] if fault == "truncated" else raw, limit_headers)
                    if status == 200 and fault != "truncated":
                        record["answered"] = True  # a whole answer went out: a paid call
                        record["usage"] = payload.get("usage") if isinstance(payload, dict) else None
                record["done"] = time.perf_counter()

        return Handler
