"""Secrets out of everything this project prints, records or renders.

evals writes the whole command line into the log's spec, and users pass keys as completion args
(``--completion_args api_key=sk-...``). Anything that shows a command, a completion fn's settings
or an endpoint goes through here first: the resume hint, the summary, report.md/json/html and the
``econarena_players`` event.
"""
from __future__ import annotations

import re
import shlex
from typing import Any, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "***"

# A name that holds a secret: api_key, OPENAI_API_KEY, auth_token, client_secret, password...
# "tokens" (max_tokens, max_completion_tokens) is a budget, not a secret.
_SECRET_NAME = re.compile(r"key|token(?!s)|secret|passw(or)?d|credential|authorization|signature|^sig$", re.I)
# Secret-looking values wherever they appear, whatever they are called.
_SECRET_VALUE = re.compile(
    r"\b(sk-[A-Za-z0-9_\-]{6,}|sess-[A-Za-z0-9_\-]{6,}|(?:Bearer|Basic)\s+[A-Za-z0-9._\-+/=]{6,})"
)


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(str(name)))


def redact_text(text: str) -> str:
    """Any free text (an error message, a command line) with secret-looking values masked."""
    text = _SECRET_VALUE.sub(lambda m: m.group(0).split()[0] + " " + REDACTED if " " in m.group(0) else REDACTED,
                             str(text))
    # "name": "value" pairs of JSON (a header object given inline) whose name is secret-looking
    text = re.sub(r'(?P<name>"[^"\\]*")(?P<sep>\s*:\s*)"(?P<value>[^"\\]*)"',
                  lambda m: m.group("name") + m.group("sep") + f'"{REDACTED}"'
                  if is_secret_name(m.group("name")) and m.group("value") else m.group(0), text)
    # name=value and name: value pairs whose name is secret-looking, in args lists and headers
    return re.sub(r"(?P<name>[A-Za-z_][A-Za-z0-9_\-]*)(?P<sep>\s*[=:]\s*)(?P<value>[^\s,;&'\"]+)",
                  lambda m: m.group("name") + m.group("sep") + REDACTED if is_secret_name(m.group("name"))
                  and m.group("value") != REDACTED else m.group(0), text)


def redact_mapping(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``settings`` with the value of every secret-looking name masked, recursively."""
    out: dict[str, Any] = {}
    for name, value in settings.items():
        if is_secret_name(name) and value not in (None, ""):
            out[name] = REDACTED
        elif isinstance(value, Mapping):
            out[name] = redact_mapping(value)
        elif isinstance(value, str):
            out[name] = redact_text(value)
        else:
            out[name] = value
    return out


def redact_url(url: Any) -> Any:
    """A base URL without user, password or secret query parameters."""
    if not url:
        return url
    try:
        parts = urlsplit(str(url))
    except ValueError:
        return REDACTED
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    query = urlencode([(k, REDACTED if is_secret_name(k) else v) for k, v in parse_qsl(parts.query)], safe="*")
    return urlunsplit((parts.scheme, host, parts.path, query, ""))


def redact_command(command: str) -> str:
    """An oaieval command line with secret completion/eval args and secret-looking values masked."""
    try:
        words = shlex.split(command)
    except ValueError:
        return redact_text(command)
    return shlex.join(redact_text(w) for w in words)
