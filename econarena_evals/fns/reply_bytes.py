"""A reply is data, whatever its bytes: a JSON body that is not valid UTF-8 is read, not refused;
and a reply has a size limit, compressed and inflated, checked while it streams.

A server that sends bytes no UTF-8 decoder takes (a model's raw byte tokens, a proxy cutting a
multi-byte character) makes the openai client's ``json.loads`` raise ``UnicodeDecodeError`` before
any reply exists: the call failed the same way on every retry and its session errored, with what
the server sent lost. The client's transport here hands the client the same body with each such
byte written as the text ``\\xNN`` (inside a JSON string, where the bytes of a reply are), so the
reply is recorded and scored like any other text, and the response carries
``x-econarena-bytes-escaped: 1`` to say so. A body that was valid UTF-8 is passed on untouched.

The body of a completion (``.../completions``) is read here, as it streams, and inflated here
(gzip and deflate, the encodings the transport asks for), never past ``max_reply_bytes`` either way:
a 1 MB gzip body that inflates to 1 GB is given up on at the limit, with the memory of the limit,
and the try is the endpoint's failure (``ReplyTooLarge``, retried like a truncated body). Other
bodies (a batch's output file) are the openai client's to read as before.
"""
from __future__ import annotations

import codecs
import sys
import threading
import zlib
from typing import Any, Optional

# The most a completion's body may hold, compressed or inflated: a few MiB is far past any answer
# of the game (``max_tokens`` 1024) and past a reasoning model's long one; econarena/chat's
# ``max_reply_mib`` completion arg sets another.
MAX_REPLY_BYTES = 4 * 2**20
ACCEPTED_ENCODINGS = "gzip, deflate"
_CHUNK = 64 * 1024

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


def _decoder(encoding: str) -> Optional[Any]:
    """A zlib inflater for the body's content-encoding; None for none; ValueError for another."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj(32 + zlib.MAX_WBITS)  # zlib-wrapped, as the RFC says (gzip taken too)
    raise ValueError(f"content-encoding {encoding!r} was not asked for ({ACCEPTED_ENCODINGS})")


def read_capped(chunks: Any, encoding: str, limit: int) -> bytes:
    """The body of ``chunks`` (as they arrive) inflated, raising ``ValueError`` once the bytes
    received or the bytes inflated pass ``limit``: never more than the limit is held, and nothing
    once given up on."""
    inflater = _decoder(encoding)
    body = bytearray()
    received = 0

    def add(data: bytes) -> None:
        if len(body) + len(data) > limit:  # checked before it is held: the body never grows past the limit
            raise ValueError(f"the reply inflates past {limit / 2**20:g} MiB")
        body.extend(data)

    try:
        for chunk in chunks:
            received += len(chunk)
            if received > limit:
                raise ValueError(f"the reply's body is past {limit / 2**20:g} MiB")
            if inflater is None:
                add(chunk)
                continue
            data = chunk
            while data:  # a piece at a time, never past the room left: a bomb is stopped at the limit
                add(inflater.decompress(data, min(_CHUNK, limit + 1 - len(body))))
                data = inflater.unconsumed_tail
        if inflater is not None:
            add(inflater.flush())
    except ValueError:
        # The error's traceback keeps this frame, and the failed try's error is kept for as long as
        # the call retries and its session reports it: without this, every given-up reply held the
        # whole limit that long (a session of 50 replies past 4 MiB peaked at 620 MB).
        body.clear()
        raise
    return bytes(body)


def http_client(max_reply_bytes: Optional[int] = None, **kwargs: Any) -> Any:
    """The http client the openai client would build for itself (its defaults, its http library),
    on a transport that reads a completion's body within ``max_reply_bytes`` (default
    ``MAX_REPLY_BYTES``), compressed and inflated, and a JSON body that is not UTF-8 as
    ``escaped_body`` says."""
    from openai import _base_client, _constants

    http = getattr(_base_client, "httpx2", None) or _base_client.httpx  # the library this openai uses
    limit = int(max_reply_bytes or MAX_REPLY_BYTES)

    class ReplyTooLarge(http.ReadError):
        """A completion's body past the limit: the endpoint's failure, as a cut-off body is."""

        too_large = True  # ``said``: the openai client's "Connection error." says why

    class Transport(http.BaseTransport):
        def __init__(self) -> None:
            self.inner = http.HTTPTransport(limits=_constants.DEFAULT_CONNECTION_LIMITS)

        def handle_request(self, request: Any) -> Any:
            completion = request.url.path.endswith("/completions")
            if completion:
                request.headers["Accept-Encoding"] = ACCEPTED_ENCODINGS  # no encoding read without a bound
            response = self.inner.handle_request(request)
            if not completion:
                return response
            try:
                body = read_capped(response.stream, response.headers.get("content-encoding", ""), limit)
            except ValueError as exc:
                raise ReplyTooLarge(f"{exc}: given up on (max_reply_mib)", request=request) from None
            finally:
                response.close()
            headers = [(k, v) for k, v in response.headers.raw
                       if k.lower() not in (b"content-length", b"content-encoding", b"transfer-encoding")]
            response = http.Response(response.status_code, headers=headers, content=body, request=request,
                                     extensions=response.extensions)
            if "json" not in response.headers.get("content-type", ""):
                return response
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
    hooks = kwargs.pop("event_hooks", None) or {}
    hooks = {**hooks, "response": [*hooks.get("response", []), stay_on_origin]}
    return http.Client(transport=Transport(), event_hooks=hooks, **kwargs)


_SAID: set[tuple[str, str]] = set()
_SAID_LOCK = threading.Lock()


def stay_on_origin(response: Any) -> None:
    """A response hook: a redirect to another host is not followed (its Location is dropped, so the
    redirect is the answer, a failed call), and said once per pair of hosts. httpx would follow it
    with every header but Authorization: an ``extra_headers`` secret would go to that host, and its
    reply be scored as the endpoint's. A redirect on the same host (http to https included) is
    followed as before."""
    if not response.has_redirect_location:
        return
    here = response.request.url
    there = here.join(response.headers["location"])
    if there.host == here.host and (there.origin == here.origin or (here.scheme, there.scheme) == ("http", "https")):
        return
    del response.headers["location"]
    pair = (here.netloc.decode("ascii"), there.netloc.decode("ascii"))
    with _SAID_LOCK:
        first = pair not in _SAID
        _SAID.add(pair)
    if first:
        sys.stderr.write(f"econarena: {pair[0]} redirected a request to another host, {pair[1]}: not followed "
                         "(no header or key goes there); the call fails. Point the endpoint at the host that answers\n")
        sys.stderr.flush()


def said(exc: Exception) -> Exception:
    """The openai client's connection error, saying why when its cause was a reply past the limit
    (the client's own message is "Connection error." whatever the cause); else ``exc`` itself."""
    cause = exc.__cause__
    if not getattr(cause, "too_large", False):
        return exc
    from openai import APIConnectionError

    out = APIConnectionError(message=f"Connection error: {cause}", request=exc.request)  # type: ignore[attr-defined]
    out.__cause__ = cause
    return out
