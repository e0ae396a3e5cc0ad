"""A reply is data, whatever its bytes: a JSON body that is not valid UTF-8 is read, not refused.

A server that sends bytes no UTF-8 decoder takes (a model's raw byte tokens, a proxy cutting a
multi-byte character) makes the openai client's ``json.loads`` raise ``UnicodeDecodeError`` before
any reply exists: the call failed the same way on every retry and its session errored, with what
the server sent lost. The client's transport here hands the client the same body with each such
byte written as the text ``\\xNN`` (inside a JSON string, where the bytes of a reply are), so the
reply is recorded and scored like any other text, and the response carries
``x-econarena-bytes-escaped: 1`` to say so. A body that was valid UTF-8 is passed on untouched.
"""
from __future__ import annotations

import codecs
from typing import Any

ESCAPED_HEADER = "x-econarena-bytes-escaped"
_ERRORS = "econarena-json-bytes"


def _escape_bytes(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    # "\\xNN" in the JSON text is the four characters \xNN in the string it decodes to
    return "".join(f"\\\\x{b:02x}" for b in error.object[error.start:error.end]), error.end


codecs.register_error(_ERRORS, _escape_bytes)


def escaped_body(body: bytes) -> bytes:
    """``body`` with every byte that is not part of valid UTF-8 written as ``\\xNN`` text."""
    return body.decode("utf-8", _ERRORS).encode("utf-8")


def http_client(**kwargs: Any) -> Any:
    """The http client the openai client would build for itself (its defaults, its http library),
    on a transport that reads a JSON body that is not UTF-8 as ``escaped_body`` says."""
    from openai import _base_client, _constants

    http = getattr(_base_client, "httpx2", None) or _base_client.httpx  # the library this openai uses

    class Transport(http.BaseTransport):
        def __init__(self) -> None:
            self.inner = http.HTTPTransport(limits=_constants.DEFAULT_CONNECTION_LIMITS)

        def handle_request(self, request: Any) -> Any:
            response = self.inner.handle_request(request)
            if "json" not in response.headers.get("content-type", ""):
                return response
            body = response.read()
            try:
                body.decode("utf-8")
                return response
            except UnicodeDecodeError:
                pass
            headers = [(k, v) for k, v in response.headers.raw
                       if k.lower() not in (b"content-length", b"content-encoding", b"transfer-encoding")]
            return http.Response(response.status_code, headers=headers + [(ESCAPED_HEADER.encode(), b"1")],
                                 content=escaped_body(body), request=request, extensions=response.extensions)

        def close(self) -> None:
            self.inner.close()

    kwargs.setdefault("follow_redirects", True)
    return http.Client(transport=Transport(), **kwargs)
