"""``econarena/chat``'s batch mode on the wire: OpenAI's Files and Batches API, through the openai client.

``calls.batches`` decides what goes in which batch and when; this module only speaks the API
(upload the JSONL input file, create the batch, retrieve it, download its output and error files,
list batches to find one made of a given input file) and turns a seat call into a batch line and
a line's response back into the parsed completion the synchronous path would have had.
"""
from __future__ import annotations

import threading
from typing import Any, Iterator, Mapping, Optional

from ..calls.batches import Status
from .chat import ChatCompletionFn, shared_client
from .identity import endpoint_label
from .reply_bytes import escaped_body

ENDPOINT = "/v1/chat/completions"
API_TIMEOUT_S = 120.0  # one request to the files or batches API (an upload of a large input file included)
COMPLETION_WINDOW = "24h"  # the only window OpenAI offers
LISTED = 500  # how many of the newest batches ``find`` looks through

_apis: dict[tuple[Any, ...], "OpenAIBatches"] = {}
_apis_lock = threading.Lock()


class OpenAIBatches:
    """The batch API of one endpoint and key (``calls.batches.BatchAPI``)."""

    def __init__(self, fn: ChatCompletionFn) -> None:
        self.fn = fn
        self.label = endpoint_label(fn.api_base) or "api.openai.com"
        self.headers = {"extra_headers": fn.extra_headers} if fn.extra_headers else {}
        self.fallback = bool(fn.batch_fallback)  # calls no batch answered may go synchronously

    @property
    def client(self) -> Any:
        # made at the first request, where a missing key is an error of that request: the run stops
        # with one line (``calls.errors.fatal``), not a traceback before the first call
        return shared_client(self.fn.api_base, self.fn.api_key, API_TIMEOUT_S, 0, connect_s=30.0)

    def upload(self, data: bytes) -> str:
        return self.client.files.create(file=("econarena_batch.jsonl", data), purpose="batch", **self.headers).id

    def create(self, file_id: str, metadata: Mapping[str, str]) -> str:
        return self.client.batches.create(input_file_id=file_id, endpoint=ENDPOINT, completion_window=COMPLETION_WINDOW,
                                          metadata=dict(metadata), **self.headers).id

    def retrieve(self, batch_id: str) -> Status:
        return status_of(self.client.batches.retrieve(batch_id, **self.headers))

    def download(self, file_id: str) -> Iterator[bytes]:
        """The file's lines as they stream in: memory is bounded by the longest line, not the file.
        Bytes that are not UTF-8 become \\xNN text, as a synchronous reply's would (``reply_bytes``)."""
        with self.client.files.with_streaming_response.content(file_id, **self.headers) as response:
            held = bytearray()
            for chunk in response.iter_bytes():
                held += chunk
                end = held.rfind(b"\n")
                if end < 0:
                    continue
                for line in bytes(held[:end]).split(b"\n"):
                    yield escaped_body(line)
                del held[:end + 1]
            if held:
                yield escaped_body(bytes(held))

    def find(self, file_id: str) -> Optional[str]:
        for n, batch in enumerate(self.client.batches.list(limit=100, **self.headers)):
            if batch.input_file_id == file_id:
                return batch.id
            if n + 1 >= LISTED:
                break
        return None


def status_of(batch: Any) -> Status:
    """The batch object as ``calls.batches`` reads it. A field of the wrong type (a gateway's own
    shape, ``errors.data`` holding strings) is ignored and named in ``notes``, never an error: the
    batch is still at the provider, and a failed look would only be asked again."""
    notes: list[str] = []

    def field(obj: Any, name: str, kind: Any, default: Any, where: str = "") -> Any:
        value = obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)
        if value is None or value is default:
            return default
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            return value
        notes.append(f"the batch object's {where}{name} is {type(value).__name__} {str(value)[:40]!r}, not "
                     f"{getattr(kind, '__name__', 'str')}: ignored")
        return default

    counts = getattr(batch, "request_counts", None)
    errors = getattr(batch, "errors", None)
    data = field(errors, "data", list, [], "errors.")
    said = []
    for e in data:
        if isinstance(e, str):
            said.append(e)
            continue
        message, line = field(e, "message", str, ""), field(e, "line", int, None, "errors.data[].")
        said.append(f"line {line}: {message}" if line is not None else message)
    return Status(id=field(batch, "id", str, ""), status=field(batch, "status", str, ""),
                  total=field(counts, "total", int, 0, "request_counts."),
                  completed=field(counts, "completed", int, 0, "request_counts."),
                  failed=field(counts, "failed", int, 0, "request_counts."),
                  output_file_id=field(batch, "output_file_id", str, None) or None,
                  error_file_id=field(batch, "error_file_id", str, None) or None,
                  errors="; ".join(x for x in said if x), notes=tuple(notes))


def batch_api(fn: Any) -> Optional[OpenAIBatches]:
    """The batch API ``fn``'s seat calls go through, or None for a fn that is not in batch mode."""
    if not isinstance(fn, ChatCompletionFn) or not fn.batch:
        return None
    key = (fn.api_base, fn.api_key, fn.model, tuple(sorted(fn.extra_headers.items())),  # a batch is one model's
           fn.batch_fallback)
    with _apis_lock:
        if key not in _apis:
            _apis[key] = OpenAIBatches(fn)
        return _apis[key]


def parsed(body: Mapping[str, Any]) -> Any:
    """A batch line's response body as the openai client parses a synchronous one (leniently)."""
    from openai._models import construct_type
    from openai.types.chat import ChatCompletion

    return construct_type(type_=ChatCompletion, value=dict(body))
