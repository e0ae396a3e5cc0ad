"""What a failed try means: wait for a rate limit, retry a transient error, stop the run, or give up.

The classes of docs/reliability.md's retry table, read from what the endpoint said: the HTTP status,
the error body (OpenAI's ``{"error": {"code", "type", "message"}}``, Anthropic's
``{"type": "error", "error": {"type": "overloaded_error", ...}}``, Google's
``{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [...]}}``, which Google's
OpenAI-compatible endpoint may send wrapped in a list) and the headers.
"""
from __future__ import annotations

import json
import re
from typing import Any, Mapping, Optional

from ..core.redact import redact_url
from .limits import parse_duration, seconds_until


class RetryNow(RuntimeError):
    """Raised by a completion fn that changed how it asks (a model that refused an argument) and
    wants one more try at once; it counts as a try, and says nothing about the endpoint."""


class NotACompletion(RuntimeError):
    """An answer that is no completion: an HTTP 200 with no ``choices`` or a choice without its
    ``message`` (a broken endpoint or gateway), or a completion fn that returned no completions.
    The endpoint's fault, never the model's rule break: retried like a 5xx, counted by the breaker.
    (A message whose ``content`` is null is the model's answer, and a rule break.)"""


class RunStopped(RuntimeError):
    """The run was stopped (an error no retry cures, or the rate-limit patience ran out): no more
    requests go out, and every call still waiting fails with this."""


class SeatCallError(RuntimeError):
    """A seat call that ran past its deadline, or was refused by its player's breaker."""


# A server too busy to answer now, for everyone: waited out (the lane pauses and probes, see
# ``pace.Pace.overloaded``), never a try, a rate limit of the key nor a quota. 529 is Anthropic's
# overloaded_error; UNAVAILABLE is Google's status for its 503.
OVERLOADED = (503, 529)
UNAVAILABLE = "UNAVAILABLE"
# Google's status for a 429 (its RPC code RESOURCE_EXHAUSTED): a per-minute or per-day limit,
# worded "You exceeded your current quota" even when a minute's wait cures it.
RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"
_NO_ALLOWANCE = re.compile(r"\blimit: 0\b")  # Google: the key's tier has no allowance for this model at all


def status_of(exc: BaseException) -> Optional[int]:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def error_body(exc: BaseException) -> dict[str, Any]:
    """The error object of a refusal's body, in any of the providers' shapes; {} if it has none."""
    body = getattr(exc, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], dict):
        body = body[0]  # Google's OpenAI-compatible endpoint: [{"error": {...}}]
    if isinstance(body, dict):
        inner = body.get("error", body)
        return inner if isinstance(inner, dict) else {}
    return {}


def headers_of(exc: BaseException) -> Mapping[str, str]:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    return headers if headers is not None else {}


_TRY_AGAIN = re.compile(r"(?:try again|retry) in (\d+(?:\.\d+)?)\s*(ms|s|seconds?|m|minutes?)\b", re.I)


def _retry_delay(body: Mapping[str, Any]) -> Optional[float]:
    """Google's ``google.rpc.RetryInfo`` detail: ``{"@type": ".../google.rpc.RetryInfo", "retryDelay": "7s"}``."""
    details = body.get("details")
    for detail in details if isinstance(details, list) else ():
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            return parse_duration(detail.get("retryDelay"))
    return None


def server_wait(exc: BaseException) -> Optional[float]:
    """How long the server asked us to wait before trying again, if it said."""
    said = server_wait_said(exc)
    return None if said is None else said[0]


def server_wait_said(exc: BaseException) -> Optional[tuple[float, str]]:
    """(seconds, where the server said it) of the wait a refusal asks for, if it said."""
    headers = headers_of(exc)
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000), "retry-after-ms"
        except ValueError:
            pass
    after = parse_duration(headers.get("retry-after"))
    if after is not None:
        return after, "retry-after"
    body = error_body(exc)
    delay = _retry_delay(body)
    if delay is not None:
        return delay, "retryDelay"
    said = _TRY_AGAIN.search(str(body.get("message") or exc))
    if said:
        unit = said.group(2).lower()
        return float(said.group(1)) * (0.001 if unit == "ms" else 60 if unit.startswith("m") and unit != "ms" else 1), \
            "the error message"
    resets = [(r, f"x-ratelimit-reset-{k}") for k in ("requests", "tokens")
              if (r := parse_duration(headers.get(f"x-ratelimit-reset-{k}"))) is not None]
    resets += [(r, f"anthropic-ratelimit-{k}-reset") for k in ("requests", "tokens")
               if headers.get(f"anthropic-ratelimit-{k}-remaining") == "0"
               and (r := seconds_until(headers.get(f"anthropic-ratelimit-{k}-reset"))) is not None]
    return max(resets) if resets else None


def is_rate_limited(exc: BaseException) -> bool:
    """A 429 that waiting cures: any 429 but a quota (billing) error."""
    return status_of(exc) == 429 and fatal_cause(exc) is None


def is_overloaded(exc: BaseException) -> bool:
    """The endpoint is too busy for everyone (503, Anthropic's 529 ``overloaded_error``, Google's
    ``UNAVAILABLE``): a wait, not a failure of the call."""
    if status_of(exc) in OVERLOADED:
        return True
    body = error_body(exc)
    return body.get("type") == "overloaded_error" or body.get("status") == UNAVAILABLE


def fatal_cause(exc: BaseException) -> Optional[str]:
    """One line naming an error that no retry cures, and what to do about it; None for any other."""
    stop = fatal(exc)
    return None if stop is None else stop[1]


def fatal(exc: BaseException) -> Optional[tuple[str, str]]:
    """(the stop's word in the log and the summary's status, the line for the user), or None."""
    if _no_key(exc):
        # the environment, not --completion_args api_key=...: evals writes the command line into the log
        return "key", "no API key was given: set the OPENAI_API_KEY environment variable to your key, then resume"
    status = status_of(exc)
    if status is None or status in OVERLOADED:
        return None
    body = error_body(exc)
    code = str(body.get("code") or body.get("type") or "")
    message = str(body.get("message") or exc)[:200]
    if status == 429:
        return _fatal_429(body, code, message)
    if status == 401:
        return "key", ("the endpoint refused the API key (401): check OPENAI_API_KEY / api_key, then resume. "
                       f"Server said: {message}")
    if status == 402:  # Anthropic's billing_error
        return "quota", (f"the endpoint refused the account's billing (402 {code or 'billing_error'}): check its "
                         "payment details or credit, then resume")
    if status == 403:
        return "permission", ("the API key may not use this model or endpoint (403): check its permissions, then "
                              f"resume. Server said: {message}")
    if status == 404:
        return "model", ("the endpoint does not know this model or path (404): check the model name and base URL, "
                         f"then resume. Server said: {message}")
    if status == 400 and ("context_length" in code or "maximum context length" in message.lower()):
        return "context", (f"a prompt is too long for the model's context (400 {code}): use a model with a longer "
                           "context, or lower max_tokens")
    return None


def _no_key(exc: BaseException) -> bool:
    """The openai client refusing to build without a key: every call would fail the same way, before
    any request (``Missing credentials`` in openai 3, ``The api_key client option must be set`` in 1-2)."""
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a dependency
        return False
    text = str(exc)
    return (type(exc) is openai.OpenAIError
            and ("Missing credentials" in text or "api_key client option must be set" in text))


def _fatal_429(body: Mapping[str, Any], code: str, message: str) -> Optional[tuple[str, str]]:
    """A 429 that no wait cures: a quota used up, a spend limit reached. Any other is a rate limit."""
    details = body.get("details")
    spend = isinstance(details, dict) and details.get("error_code") == "enforced_spend_limit_reached"  # Anthropic
    if body.get("status") == RESOURCE_EXHAUSTED and not spend:
        if not _NO_ALLOWANCE.search(message):
            return None  # Google words its minute limits as a quota: waited out (rate_limit_patience_s bounds it)
        return "quota", (f"the API key has no allowance for this model (429 {RESOURCE_EXHAUSTED}, limit: 0): use a "
                         "model its tier allows, or another key")
    lowered = message.lower()
    if spend or "insufficient_quota" in code or "quota" in lowered and "exceeded your" in lowered:
        return "quota", (f"the API key's quota is used up (429 {code or 'insufficient_quota'}): add credit or use "
                         "another key, then resume")
    return None


def is_transient(exc: BaseException) -> bool:
    """Errors worth another try: rate limits, 5xx (an overload among them), connection trouble, timeouts."""
    if isinstance(exc, (RetryNow, NotACompletion)):
        return True
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a dependency
        openai = None  # type: ignore[assignment]
    if openai is not None and isinstance(
        exc,
        (openai.RateLimitError, openai.APIConnectionError, openai.APITimeoutError, openai.InternalServerError),
    ):
        return True
    if openai is not None and isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    # A truncated or garbled response body is the server's fault, not the request's.
    if openai is not None and isinstance(exc, openai.APIResponseValidationError):
        return True
    return isinstance(exc, (ConnectionError, TimeoutError, json.JSONDecodeError)) or is_overloaded(exc)


def is_endpoint_failure(exc: BaseException) -> bool:
    """Failures that say the endpoint is down or refusing us, which the breaker counts.

    A completion fn's own bug (a TypeError for an unexpected keyword, say) says nothing about the
    endpoint: counting it would report a healthy endpoint as "presumed down".
    """
    if isinstance(exc, RetryNow) or is_rate_limited(exc) or is_overloaded(exc):
        return False  # a busy endpoint is not a down one
    stop = fatal(exc)
    if stop is not None and stop[0] == "quota":
        # an account out of credit, answered by an endpoint that is up: the run stops on its own line,
        # and the calls in flight that come back refused as well must not add "presumed down" to it
        return False
    if isinstance(exc, SeatCallError) or is_transient(exc):
        return True
    try:
        import openai
    except ImportError:  # pragma: no cover
        return False
    return isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError))


def described(exc: BaseException) -> str:
    """``Type: message``, and the endpoint the failed request went to when the error knows it and
    its message does not say it (the openai client's ``Connection error.`` names no URL)."""
    line = f"{type(exc).__name__}: {exc}"
    request = getattr(exc, "request", None)
    url = getattr(request, "url", None)
    if url is not None:
        where = redact_url(str(url).split("?", 1)[0])
        if where and str(where) not in line:
            line += f" ({request.method} {where})" if isinstance(getattr(request, "method", None), str) else f" ({where})"
    return line
