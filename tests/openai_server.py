"""A real OpenAI-compatible HTTP server on 127.0.0.1 for end-to-end tests and benchmarks.

It speaks ``GET /v1/models``, ``POST /v1/chat/completions`` and ``POST /v1/completions`` and answers
with a deterministic policy of the prompt text. It records every request so tests can prove which
endpoint was called. Usage is sent the way today's API sends it, with nested detail objects.
It also speaks the Files and Batches API (``BatchAPI``): a batch's lines get the answers the same
bodies get from ``POST /v1/chat/completions``.
"""
from __future__ import annotations

import collections
import email.parser
import email.policy
import itertools
import json
import math
import random
import re
import sys
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

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-answer (a reply it gave up on at its size limit, a stopped run)
        is no server error: not printed. Anything else is, as socketserver prints it."""
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


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


OVERLOAD_BODIES = {
    "anthropic": (529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    "openai": (503, {"error": {"message": "The engine is currently overloaded, please try again later",
                               "type": "server_error", "code": None}}),
    "google": (503, {"error": {"code": 503, "status": "UNAVAILABLE",
                               "message": "The model is overloaded. Please try again later."}}),
}


class Storm:
    """An overload for everyone, for ``OpenAIServer(answer=...)``: from ``after_s`` past the first
    POST, for ``for_s`` (inf: it never ends), every request is refused the way the provider named
    refuses it when overloaded (Anthropic's 529 ``overloaded_error``, OpenAI's 503, Google's 503
    ``UNAVAILABLE``); with ``every_s``, again every ``every_s`` (12 s of every 20 s: after_s=0,
    for_s=12, every_s=20). ``refused`` counts them."""

    def __init__(self, after_s: float, for_s: float, shape: str = "anthropic", every_s: float = math.inf) -> None:
        self.after_s, self.for_s, self.shape, self.every_s = after_s, for_s, shape, every_s
        self.first: Optional[float] = None
        self.refused = 0
        self.lock = threading.Lock()

    def __call__(self, n: int, payload: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        now = time.monotonic()
        with self.lock:
            self.first = now if self.first is None else self.first
            since = now - self.first
            if self.every_s < math.inf:
                since %= self.every_s
            if self.after_s <= since < self.after_s + self.for_s:
                self.refused += 1
                status, body = OVERLOAD_BODIES[self.shape]
                return status, body, {}
        return 200, payload, {}


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


# The Files and Batches API, in the shapes OpenAI documents (api-reference/batch, /files, and the
# Batch guide's output and expiry lines); the installed client's Batch and FileObject models parse them.
BATCH_ENDPOINT = "/v1/chat/completions"  # the only endpoint this server answers in a batch
BATCH_MAX_LINES = 50_000
DAY_S = 24 * 3600
BATCH_EXPIRED = {"code": "batch_expired",
                 "message": "This request could not be executed before the completion window expired."}
FILE_PURPOSES = ("assistants", "batch", "fine-tune", "vision", "user_data", "evals")
OUTCOMES = ("completed", "failed", "expired", "cancelled")
CANCELLABLE = ("validating", "in_progress", "finalizing")
TERMINAL = ("completed", "failed", "expired", "cancelled")
STAMPS = {"in_progress": "in_progress_at", "finalizing": "finalizing_at", "completed": "completed_at",
          "failed": "failed_at", "expired": "expired_at", "cancelling": "cancelling_at",
          "cancelled": "cancelled_at"}
# (custom_id, body) of a batch line -> None to answer it, or (status, error body) for the error file
LineError = Callable[[str, dict[str, Any]], Optional[tuple[int, dict[str, Any]]]]


def api_error(message: str, kind: str = "invalid_request_error", param: Optional[str] = None,
              code: Optional[str] = None) -> dict[str, Any]:
    """An error body as the OpenAI API sends one."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def completes(batch_index: int) -> str:
    return "completed"


def no_line_error(custom_id: str, body: dict[str, Any]) -> Optional[tuple[int, dict[str, Any]]]:
    return None


@dataclass(frozen=True)
class BatchBehaviour:
    """How the Batch API treats the batches created while it is ``OpenAIServer.batch.behaviour``.

    Nothing runs in the background: a batch's state is derived from its age whenever it is asked
    for, and its output and error files are written the first time it is seen in a final state."""

    validate_s: float = 0.0  # `validating` this long after the create
    run_s: float = 0.0  # then `in_progress` this long, its lines answered evenly over it
    finalize_s: float = 0.0  # then `finalizing` this long before `completed`
    cancel_s: float = 0.0  # `cancelling` this long before `cancelled`
    # the batch's number (0 for the first created, refused creates not counted) -> one of OUTCOMES:
    # "failed" at the end of validation (an enqueued-token limit), "expired" or "cancelled" (by
    # someone else) at the end of its run, with only some of its lines answered
    outcome: Callable[[int], str] = completes
    # how many lines an expired or cancelled batch answered: stop_after, else stop_share of them
    stop_after: Optional[int] = None
    stop_share: float = 0.5
    line_error: LineError = no_line_error
    hold: Optional[threading.Event] = None  # while set() has not been called, no batch leaves `in_progress`
    shuffle: bool = True  # output and error lines out of input order, as the guide warns they may come


def form_fields(content_type: str, raw: bytes) -> dict[str, tuple[Optional[str], bytes]]:
    """name -> (filename, bytes) of a multipart/form-data body (the ``cgi`` module is gone in 3.13)."""
    head = b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n"
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
    if not message.is_multipart():
        return {}
    return {str(part.get_param("name", header="content-disposition")):
            (part.get_filename(), part.get_payload(decode=True) or b"") for part in message.iter_parts()}


class _Batch:
    def __init__(self, batch_id: str, index: int, request: dict[str, Any], lines: list[tuple[str, dict[str, Any]]],
                 errors: list[dict[str, Any]], behaviour: BatchBehaviour) -> None:
        self.id, self.index, self.request, self.lines, self.errors = batch_id, index, request, lines, errors
        self.behaviour = behaviour
        self.outcome = behaviour.outcome(index)
        assert self.outcome in OUTCOMES, f"outcome({index}) is {self.outcome!r}, not one of {OUTCOMES}"
        if self.outcome == "failed" and not errors:
            self.errors = [{"code": "token_limit_exceeded", "line": None, "param": None, "message":
                            "Enqueued token limit reached for this model in organization org-test. Please try "
                            "again once some in_progress batches have been completed."}]
        self.created, self.wall = time.monotonic(), time.time()
        self.released: Optional[float] = None  # when the hold was first seen set
        self.cancel_at: Optional[float] = None  # when a client's cancel came
        self.answers: list[tuple[str, str, int, dict[str, Any]]] = []  # (line id, request id, status, body)
        self.output_file_id: Optional[str] = None
        self.error_file_id: Optional[str] = None
        self.usage: Optional[dict[str, Any]] = None
        self.finished = False

    def stamp(self, at: float) -> int:
        return int(self.wall + (at - self.created))

    def stopped_after(self) -> int:
        """Lines answered when an expiry or someone else's cancel stops the batch."""
        b, total = self.behaviour, len(self.lines)
        if self.outcome not in ("expired", "cancelled"):
            return total
        return max(0, min(total, b.stop_after if b.stop_after is not None else int(total * b.stop_share)))

    def events(self, now: float) -> tuple[list[tuple[float, str]], float]:
        """(time, status) of every step of the batch's life, the last ones possibly still to come;
        and when its run ends."""
        b = self.behaviour
        ran_from = self.created + b.validate_s
        run_end = ran_from + b.run_s
        if b.hold is not None:
            if self.released is None and b.hold.is_set():
                self.released = now
            run_end = max(run_end, self.released) if self.released is not None else math.inf
        steps = [(self.created, "validating")]
        if self.errors:
            steps.append((ran_from, "failed"))
        else:
            steps.append((ran_from, "in_progress"))
            steps += {"completed": [(run_end, "finalizing"), (run_end + b.finalize_s, "completed")],
                      "expired": [(run_end, "expired")],
                      "cancelled": [(run_end, "cancelling"), (run_end + b.cancel_s, "cancelled")]}[self.outcome]
        if self.cancel_at is not None:  # a client's cancel replaces whatever was still to come
            steps = [s for s in steps if s[0] <= self.cancel_at]
            steps += [(self.cancel_at, "cancelling"), (self.cancel_at + b.cancel_s, "cancelled")]
        return steps, run_end

    def ran(self, at: float) -> int:
        """Lines answered by ``at``: evenly over the run, and no more than an early stop allows."""
        if self.errors or at < self.created + self.behaviour.validate_s:
            return 0
        total, run_s = len(self.lines), self.behaviour.run_s
        done = total if run_s <= 0 else min(total, int(total * (at - self.created - self.behaviour.validate_s) / run_s))
        return min(done, self.stopped_after())


class BatchAPI:
    """The Files and Batches endpoints of ``OpenAIServer``, and what they saw.

    Each batch line is answered by ``respond(url, body)``, the very code that answers a synchronous
    ``POST /v1/chat/completions``, but it is no synchronous request: it is in none of the server's
    ``requests`` and is counted in ``lines_answered`` instead."""

    def __init__(self, respond: Callable[[str, dict[str, Any]], tuple[int, dict[str, Any]]],
                 behaviour: BatchBehaviour) -> None:
        self.respond = respond
        self.behaviour = behaviour  # read at each create: a new one applies to batches created after
        self.lock = threading.Lock()
        self.files: dict[str, dict[str, Any]] = {}  # id -> FileObject, uploaded or written by a batch
        self.contents: dict[str, bytes] = {}
        self.uploads: list[dict[str, Any]] = []  # the FileObject of every upload, in order
        self.created: list[dict[str, Any]] = []  # every batch created: its request, custom_ids and bodies
        self.refused: list[dict[str, Any]] = []  # creates refused with a 400: the request and the error
        self.retrieves: collections.Counter[str] = collections.Counter()  # batch id -> GET /v1/batches/{id}
        self.cancels: list[str] = []  # batch ids a cancel was asked for
        self.downloads: list[str] = []  # file ids whose content was fetched
        self.deletes: list[str] = []
        self.lines_answered = 0  # batch lines answered (into the output or the error file)
        self.requests: list[tuple[str, str]] = []  # (method, path) of every Files and Batches request
        self._batches: dict[str, _Batch] = {}
        self._counters: dict[str, "itertools.count[int]"] = collections.defaultdict(lambda: itertools.count(1))
        # a misbehaving batch API, set by a test at any time: ``fault(method, path)`` may answer a
        # request in place of the API (an outage: 503); ``mangle(view)`` changes a batch object
        # before it goes out (a field of the wrong type); ``written(which, lines)`` changes a
        # finished batch's output or error lines before they are stored (a line twice)
        self.fault: Optional[Callable[[str, str], Optional[tuple[int, Any]]]] = None
        self.mangle: Optional[Callable[[dict[str, Any]], dict[str, Any]]] = None
        self.written: Optional[Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]]] = None
        self.faulted: collections.Counter[str] = collections.Counter()  # "METHOD path-kind" -> requests faulted

    PATH = re.compile(r".*/(files|batches)(?:/([^/]+))?(?:/(content|cancel))?")

    def handles(self, path: str) -> bool:
        return self.PATH.fullmatch(path) is not None

    def batch(self, batch_id: str) -> dict[str, Any]:
        """The Batch object as a retrieve would see it now, without counting as one."""
        with self.lock:
            return self._view(self._batches[batch_id], time.monotonic())

    def file_content(self, file_id: str) -> bytes:
        with self.lock:
            return self.contents[file_id]

    # the HTTP side: (status, JSON body or raw bytes) for each request

    def _faulted(self, method: str, path: str) -> Optional[tuple[int, Any]]:
        answer = self.fault(method, path) if self.fault is not None else None
        if answer is not None:
            kind, ident, action = self._parse(path)
            self.faulted[f"{method} {kind}{'/id' if ident else ''}{'/' + action if action else ''}"] += 1
        return answer

    def get(self, path: str, query: str) -> tuple[int, Any]:
        kind, ident, action = self._parse(path)
        with self.lock:
            self.requests.append(("GET", path))
            faulted = self._faulted("GET", path)
            if faulted is not None:
                return faulted
            now = time.monotonic()
            if kind == "batches" and ident is None:
                return 200, self._list(now, query)
            if kind == "batches" and action is None:
                if ident not in self._batches:
                    return 404, api_error(f"No batch found with id '{ident}'.")
                self.retrieves[ident] += 1
                view = self._view(self._batches[ident], now)
                return 200, (self.mangle(view) if self.mangle is not None else view)
            if kind == "files" and ident is None:
                return 200, {"object": "list", "data": list(self.files.values()), "has_more": False}
            if kind == "files" and ident in self.files:
                if action == "content":
                    self.downloads.append(ident)
                    return 200, self.contents[ident]
                if action is None:
                    return 200, self.files[ident]
            if kind == "files":
                return 404, api_error(f"No such File object: {ident}", param="id")
            return 404, api_error(f"Invalid URL (GET {path})")

    def post(self, path: str, content_type: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        kind, ident, action = self._parse(path)
        with self.lock:
            self.requests.append(("POST", path))
            faulted = self._faulted("POST", path)
            if faulted is not None:
                return faulted
            if kind == "files" and ident is None:
                return self._upload(content_type, raw)
            if kind == "batches" and ident is None:
                try:
                    request = json.loads(raw or b"{}")
                except ValueError:
                    request = None
                return self._create(request if isinstance(request, dict) else {})
            if kind == "batches" and action == "cancel":
                return self._cancel(str(ident))
            return 404, api_error(f"Invalid URL (POST {path})")

    def delete(self, path: str) -> tuple[int, dict[str, Any]]:
        kind, ident, action = self._parse(path)
        with self.lock:
            self.requests.append(("DELETE", path))
            if kind == "files" and action is None and ident in self.files:
                del self.files[ident]
                del self.contents[ident]
                self.deletes.append(ident)
                return 200, {"id": ident, "object": "file", "deleted": True}
            return 404, api_error(f"No such File object: {ident}", param="id")

    # the work, under the lock

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._counters[prefix]):06d}"

    def _parse(self, path: str) -> tuple[str, Optional[str], Optional[str]]:
        match = self.PATH.fullmatch(path)
        assert match is not None
        return match.group(1), match.group(2), match.group(3)

    def _store(self, name: str, purpose: str, content: bytes) -> dict[str, Any]:
        file = {"id": self._new_id("file-"), "object": "file", "bytes": len(content),
                "created_at": int(time.time()), "filename": name, "purpose": purpose, "status": "processed",
                "expires_at": int(time.time()) + 30 * DAY_S if purpose.startswith("batch") else None,
                "status_details": None}
        self.files[file["id"]], self.contents[file["id"]] = file, content
        return file

    def _upload(self, content_type: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        fields = form_fields(content_type, raw) if content_type.startswith("multipart/form-data") else {}
        if "file" not in fields or "purpose" not in fields:
            return 400, api_error("Missing required parameter: 'file' and 'purpose' are both needed.",
                                  param="file" if "file" not in fields else "purpose")
        name, content = fields["file"]
        purpose = fields["purpose"][1].decode("utf-8", "replace")
        if purpose not in FILE_PURPOSES:
            return 400, api_error(f"Invalid value for 'purpose': '{purpose}'.", param="purpose")
        if purpose == "batch" and not (name or "").endswith(".jsonl"):
            return 400, api_error("Invalid file format for Batch API. Must be .jsonl", param="file")
        file = self._store(name or "upload", purpose, content)
        self.uploads.append(file)
        return 200, file

    def _create(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        refusal = self._refusal(request)
        if refusal is not None:
            self.refused.append({"request": request, "error": refusal["error"]})
            return 400, refusal
        lines, errors = self._validate(self.contents[request["input_file_id"]], request["endpoint"])
        b = _Batch(self._new_id("batch_"), len(self._batches), request, lines, errors, self.behaviour)
        self._batches[b.id] = b
        self.created.append({"id": b.id, "index": b.index, "input_file_id": request["input_file_id"],
                             "endpoint": request["endpoint"], "completion_window": request["completion_window"],
                             "metadata": request.get("metadata"), "custom_ids": [c for c, _ in lines],
                             "bodies": [body for _, body in lines]})
        return 200, self._view(b, time.monotonic())

    def _refusal(self, request: dict[str, Any]) -> Optional[dict[str, Any]]:
        """What the API says at once to a create it refuses (an input file's lines are checked later)."""
        file_id, endpoint = request.get("input_file_id"), request.get("endpoint")
        if file_id not in self.files:
            return api_error(f"Invalid 'input_file_id': no file '{file_id}' has been uploaded.", param="input_file_id")
        if self.files[file_id]["purpose"] != "batch":
            return api_error(f"The file '{file_id}' was not uploaded with purpose 'batch'.", param="input_file_id")
        if endpoint != BATCH_ENDPOINT:
            return api_error(f"Invalid value for 'endpoint': '{endpoint}' (this server batches only "
                             f"{BATCH_ENDPOINT}).", param="endpoint")
        if request.get("completion_window") != "24h":
            return api_error(f"Invalid value for 'completion_window': {request.get('completion_window')!r}. "
                             "Supported values are: '24h'.", param="completion_window")
        metadata = request.get("metadata")
        if metadata is not None and not (
                isinstance(metadata, dict) and len(metadata) <= 16
                and all(isinstance(k, str) and len(k) <= 64 and isinstance(v, str) and len(v) <= 512
                        for k, v in metadata.items())):
            return api_error("Invalid 'metadata': at most 16 pairs of strings, keys of up to 64 characters and "
                             "values of up to 512.", param="metadata")
        return None

    @staticmethod
    def _validate(content: bytes, endpoint: str) -> tuple[list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
        """The input file's requests, and the errors (BatchError) that fail the batch at validation."""
        lines: list[tuple[str, dict[str, Any]]] = []
        errors: list[dict[str, Any]] = []
        seen: set[str] = set()
        model: Optional[str] = None

        def error(code: str, n: Optional[int], message: str, param: Optional[str] = None) -> None:
            errors.append({"code": code, "line": n, "message": message, "param": param})

        # JSON Lines end at "\n" only (str.splitlines would also cut at a U+2028 inside a string)
        text = [raw.decode("utf-8", "replace") for raw in content.split(b"\n")]
        for n, line in enumerate(text, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError:
                item = None
            if not (isinstance(item, dict) and isinstance(item.get("custom_id"), str)
                    and item.get("method") == "POST" and isinstance(item.get("body"), dict)):
                error("invalid_json_line", n, "This line is not parseable as valid JSON, or lacks a string "
                      "'custom_id', 'method': 'POST', a 'url' and an object 'body'.")
                continue
            custom_id, body = item["custom_id"], item["body"]
            if item.get("url") != endpoint:
                error("url_mismatch", n, f"The URL provided for this request ('{item.get('url')}') does not match "
                      f"the batch's endpoint ('{endpoint}').", "url")
            if custom_id in seen:
                error("duplicate_custom_id", n, "The custom_id for this request is a duplicate of another request. "
                      "The custom_id parameter must be unique for each request in a batch.", "custom_id")
            if model is None:
                model = str(body.get("model"))
            elif str(body.get("model")) != model:
                error("model_mismatch", n, f"The model of this request ('{body.get('model')}') differs from the "
                      f"model of the batch's other requests ('{model}').", "body.model")
            seen.add(custom_id)
            lines.append((custom_id, body))
        if not any(line.strip() for line in text):
            error("empty_file", None, "The batch input file is empty.")
        if len(lines) > BATCH_MAX_LINES:
            error("too_many_tasks", None, f"The batch has {len(lines)} requests; at most {BATCH_MAX_LINES}.")
        return lines, errors

    def _cancel(self, batch_id: str) -> tuple[int, dict[str, Any]]:
        if batch_id not in self._batches:
            return 404, api_error(f"No batch found with id '{batch_id}'.")
        b, now = self._batches[batch_id], time.monotonic()
        self.cancels.append(batch_id)
        status = self._view(b, now)["status"]
        if status in CANCELLABLE:
            b.cancel_at = now
        elif status not in ("cancelling", "cancelled"):
            return 409, api_error(f"Cannot cancel a batch with status '{status}'.")
        return 200, self._view(b, now)

    def _answer(self, b: _Batch, upto: int) -> None:
        """Answer the batch's lines up to ``upto``, each once, as a synchronous request is answered."""
        for custom_id, body in b.lines[len(b.answers):upto]:
            failure = b.behaviour.line_error(custom_id, body)
            status, payload = failure if failure is not None else self.respond(b.request["endpoint"], body)
            b.answers.append((self._new_id("batch_req_"), self._new_id("req_"), status, payload))
            self.lines_answered += 1

    def _finish(self, b: _Batch, status: str, ran: int) -> None:
        """Write the output and error files of a batch seen in its final state for the first time."""
        b.finished = True
        out, err = [], []
        for (custom_id, _), (line_id, request_id, code, body) in zip(b.lines, b.answers[:ran]):
            line = {"id": line_id, "custom_id": custom_id, "error": None,
                    "response": {"status_code": code, "request_id": request_id, "body": body}}
            (out if code == 200 else err).append(line)
        if status == "expired":
            err += [{"id": self._new_id("batch_req_"), "custom_id": custom_id, "response": None,
                     "error": dict(BATCH_EXPIRED)} for custom_id, _ in b.lines[ran:]]
        if b.behaviour.shuffle:
            random.Random(b.id).shuffle(out)
            random.Random(b.id).shuffle(err)
        for lines, which in ((out, "output"), (err, "error")):
            if self.written is not None:
                lines = self.written(which, lines)
            if lines:
                raw = "".join(json.dumps(line) + "\n" for line in lines).encode()
                file_id = self._store(f"{b.id}_{which}.jsonl", "batch_output", raw)["id"]
                setattr(b, f"{which}_file_id", file_id)
        usages = [line["response"]["body"].get("usage") or {} for line in out]
        if usages:
            prompt = sum(u.get("prompt_tokens", 0) for u in usages)
            completion = sum(u.get("completion_tokens", 0) for u in usages)
            b.usage = {"input_tokens": prompt, "output_tokens": completion, "total_tokens": prompt + completion,
                       "input_tokens_details": {"cached_tokens": sum(
                           (u.get("prompt_tokens_details") or {}).get("cached_tokens", 0) for u in usages)},
                       "output_tokens_details": {"reasoning_tokens": sum(
                           (u.get("completion_tokens_details") or {}).get("reasoning_tokens", 0) for u in usages)}}

    def _view(self, b: _Batch, now: float) -> dict[str, Any]:
        """The Batch object at ``now``, answering the lines its progress has reached."""
        steps, run_end = b.events(now)
        passed = [s for s in steps if s[0] <= now]
        status = passed[-1][1]
        ran = b.ran(min(now, b.cancel_at) if b.cancel_at is not None else now)
        self._answer(b, ran)
        if status in TERMINAL and not b.finished:
            self._finish(b, status, ran)
        counts = {"total": 0, "completed": 0, "failed": 0}
        if status not in ("validating", "failed"):  # the lines are counted once they are accepted
            good = sum(1 for a in b.answers[:ran] if a[2] == 200)
            expired = len(b.lines) - ran if status == "expired" else 0
            counts = {"total": len(b.lines), "completed": good, "failed": ran - good + expired}
        expires = b.wall + DAY_S
        if b.outcome == "expired" and not b.errors and run_end < math.inf:
            expires = b.wall + (run_end - b.created)
        view = {"id": b.id, "object": "batch", "endpoint": b.request["endpoint"],
                "model": b.lines[0][1].get("model") if b.lines else None,
                "errors": {"object": "list", "data": b.errors} if b.errors and status == "failed" else None,
                "input_file_id": b.request["input_file_id"], "completion_window": b.request["completion_window"],
                "status": status, "output_file_id": b.output_file_id, "error_file_id": b.error_file_id,
                "created_at": b.stamp(b.created), "expires_at": int(expires),
                "request_counts": counts, "metadata": b.request.get("metadata"), "usage": b.usage}
        view.update({name: None for name in STAMPS.values()})
        view.update({STAMPS[name]: b.stamp(at) for at, name in passed if name in STAMPS})
        return view

    def _list(self, now: float, query: str) -> dict[str, Any]:
        params = dict(p.partition("=")[::2] for p in query.split("&") if p)
        newest_first = list(reversed(self._batches.values()))
        if params.get("after") in self._batches:
            newest_first = newest_first[[b.id for b in newest_first].index(params["after"]) + 1:]
        limit = max(1, min(100, int(params.get("limit") or 20)))
        data = [self._view(b, now) for b in newest_first[:limit]]
        return {"object": "list", "data": data, "has_more": len(newest_first) > limit,
                "first_id": data[0]["id"] if data else None, "last_id": data[-1]["id"] if data else None}


class OpenAIServer:
    def __init__(self, policy: Policy, models: tuple[str, ...] = ("gpt-4",), latency_s: float = 0.0,
                 faults: Faults = Faults(), plain_usage: bool = False, limiter: Optional[RateLimiter] = None,
                 azure_key: Optional[str] = None, answer_model: Optional[str] = None,
                 answer: Optional[Answer] = None, slots: Optional[int] = None, decode_s: float = 0.0,
                 batch: BatchBehaviour = BatchBehaviour()) -> None:
        self.policy = policy
        # the Files and Batches API; its requests and lines are none of ``requests`` below
        self.batch = BatchAPI(self.respond, batch)
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

    def start(self, port: int = 0) -> "OpenAIServer":
        """Serve on ``port`` (0: a free one the system picks)."""
        handler = self._handler_class()
        self._server = _Server(("127.0.0.1", port), handler)
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

    def sync_chat_requests(self, since: int = 0) -> int:
        """``POST .../chat/completions`` received (answered or not) among requests ``since`` onwards:
        the synchronous calls, which no batch line is."""
        with self._lock:
            return sum(1 for r in self.requests[since:] if route(r["path"]).endswith("/chat/completions"))

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

            def _send_raw(self, status: int, raw: bytes, headers: Optional[dict[str, str]] = None,
                          content_type: str = "application/json") -> None:
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self) -> None:
                with server._lock:
                    server.seen.append(("GET", self.path, self.headers.get("Authorization")))
                path = route(self.path)
                if server.batch.handles(path):
                    status, body = server.batch.get(path, self.path.partition("?")[2])
                    if isinstance(body, bytes):
                        self._send_raw(status, body, content_type="application/octet-stream")
                    else:
                        self._send(status, body)
                elif path.endswith("/models"):
                    self._send(200, {"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in server.models]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_DELETE(self) -> None:
                with server._lock:
                    server.seen.append(("DELETE", self.path, self.headers.get("Authorization")))
                path = route(self.path)
                self._send(*(server.batch.delete(path) if server.batch.handles(path)
                             else (404, {"error": {"message": "not found"}})))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                if server.batch.handles(route(self.path)):
                    with server._lock:
                        server.seen.append(("POST", self.path, self.headers.get("Authorization")))
                    self._send(*server.batch.post(route(self.path), self.headers.get("Content-Type", ""), raw))
                    return
                body = json.loads(raw or b"{}")
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
                    # bytes: a body exactly as given (JSON no encoder writes, such as a 1e400 count)
                    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                    self._send_raw(status, raw[: len(raw) // 2] if fault == "truncated" else raw, limit_headers)
                    if status == 200 and fault != "truncated":
                        record["answered"] = True  # a whole answer went out: a paid call
                        record["usage"] = payload.get("usage") if isinstance(payload, dict) else None
                record["done"] = time.perf_counter()

        return Handler
