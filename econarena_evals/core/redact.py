"""Secrets out of everything this project prints, records or renders.

evals writes the whole command line into the log's spec, and users pass keys as completion args
(``--completion_args api_key=sk-...``), in a URL (``http://user:password@gateway/v1?key=...``) or
as a gateway's header (``extra_headers={"X-Gateway-Auth":"..."}``). Anything that shows a command,
a completion fn's settings, an endpoint or an error goes through here first: the resume hint, the
summary, report.md/json/html, the ``econarena_players`` event and httpx's request lines.

What is masked whatever it is called: a URL's user and password (dropped) and every value of its
query string; every value of ``extra_headers`` (the header names stay: they make the condition).
What is masked by its name or shape: completion args and ``name=value`` pairs whose name looks
secret (``api_key``, ``*token``, ``password``...), and values that look like keys (``sk-...``,
``Bearer ...``).
"""
from __future__ import annotations

import json
import re
import shlex
from typing import Any, Mapping
from urllib.parse import urlsplit, urlunsplit

REDACTED = "***"

# A name that holds a secret: api_key, OPENAI_API_KEY, auth_token, client_secret, password...
# "tokens" (max_tokens, max_completion_tokens) is a budget, not a secret.
_SECRET_NAME = re.compile(r"key|token(?!s)|secret|passw(or)?d|credential|authorization|signature|^sig$", re.I)
# Secret-looking values wherever they appear, whatever they are called.
_SECRET_VALUE = re.compile(
    r"\b(sk-[A-Za-z0-9_\-]{6,}|sess-[A-Za-z0-9_\-]{6,}|(?:Bearer|Basic)\s+[A-Za-z0-9._\-+/=]{6,})"
)


# A URL in free text. No comma: evals splits --completion_args on every comma, so a comma in a
# command line ends the URL and starts the next arg.
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>`,]+")
# extra_headers given inline, as a command line writes it (extra_headers={...}) or as JSON / a
# Python dict shows it ("extra_headers": {...}); and one quoted name: value pair inside it
_HEADERS = re.compile(r"""(?P<name>["']?extra_headers["']?\s*[=:]\s*)(?P<obj>\{[^{}]*\})""", re.I)
_HEADER_PAIR = re.compile(r"""(?P<name>(?P<q>["'])[^"']*(?P=q)\s*:\s*)(?:(?P<vq>["'])[^"']*(?P=vq)|[^,}\s]+)""")
EXTRA_HEADERS = "extra_headers"
# A query parameter's name shown as it is: a short plain name; anything else is masked whole.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(str(name)))


def _mask_headers(obj: str) -> str:
    """Every value of an inline header object masked, quotes kept: '{"X-Gateway-Auth":"***"}'."""
    return _HEADER_PAIR.sub(lambda m: m.group("name") + (m.group("vq") or '"') + REDACTED + (m.group("vq") or '"'),
                            obj)


def redact_text(text: str) -> str:
    """Any free text (an error message, a command line) with secret-looking values masked."""
    text = _URL.sub(lambda m: redact_url(m.group(0)), str(text))
    text = _HEADERS.sub(lambda m: m.group("name") + _mask_headers(m.group("obj")), text)
    text = _SECRET_VALUE.sub(lambda m: m.group(0).split()[0] + " " + REDACTED if " " in m.group(0) else REDACTED,
                             text)
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
        elif str(name).lower() == EXTRA_HEADERS and value not in (None, ""):
            out[name] = redact_headers(value)
        elif isinstance(value, Mapping):
            out[name] = redact_mapping(value)
        elif isinstance(value, str):
            out[name] = redact_text(value)
        else:
            out[name] = value
    return out


def redact_headers(headers: Any) -> Any:
    """``extra_headers`` as a mapping (or its JSON text) with every value masked, whatever the
    header's name: a gateway's ``X-Gateway-Auth`` is as secret as ``Authorization``."""
    if isinstance(headers, str):
        try:
            decoded = json.loads(headers)
        except ValueError:
            return REDACTED
        return json.dumps(redact_headers(decoded)) if isinstance(decoded, Mapping) else REDACTED
    if isinstance(headers, Mapping):
        return {str(k): REDACTED for k in headers}
    return REDACTED


def redact_url(url: Any) -> Any:
    """A URL without user or password, every query value masked (``?key=***&gw=***``) and no
    fragment. Its scheme, host, port and path stay: they say which endpoint was called."""
    if not url:
        return url
    try:
        parts = urlsplit(str(url))
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:  # a port that is not a number, a bracket left open...
        return REDACTED
    pairs = [(k, REDACTED) if eq and _PLAIN_NAME.fullmatch(k) else (REDACTED, None)
             for k, eq, _ in (item.partition("=") for item in parts.query.split("&") if item)]
    query = "&".join(k if v is None else f"{k}={v}" for k, v in pairs)
    return urlunsplit((parts.scheme, host, parts.path, query, ""))


def redact_command(command: str) -> str:
    """An oaieval command line with secret completion/eval args and secret-looking values masked."""
    try:
        words = shlex.split(command)
    except ValueError:
        return redact_text(command)
    return shlex.join(redact_text(w) for w in words)
