"""A reply whose bytes are not UTF-8 is data: recorded with those bytes written as text, and scored.

The server here is real HTTP on 127.0.0.1 and sends exactly the bytes given; the run is the real
``oaieval`` with the real openai client (econarena/chat and evals' own gpt-4 fn).
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from econarena_evals.fns.reply_bytes import escaped_body, read_capped

from conftest import base_env, cli, run_cli

# a valid answer, then two bytes no UTF-8 decoder takes, inside the message's content
BODY = (b'{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [{"index": 0, '
        b'"message": {"role": "assistant", "content": "{\\"choice\\": 20} \xff\xfe"}, "finish_reason": "stop"}], '
        b'"usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}')


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def odd_bytes_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_only_the_bytes_that_are_not_utf8_are_written_as_text():
    assert escaped_body("ok é".encode()) == "ok é".encode()
    assert json.loads(escaped_body(b'{"a": "x\xff"}')) == {"a": "x\\xff"}


def _held_bytes(exc: BaseException) -> int:
    """The bytes of the bytearrays that the frames of ``exc``'s traceback, and its context's, still hold."""
    held = 0
    while exc is not None:
        tb = exc.__traceback__
        while tb is not None:
            held += sum(len(v) for v in tb.tb_frame.f_locals.values() if isinstance(v, bytearray))
            tb = tb.tb_next
        exc = exc.__context__
    return held


@pytest.mark.parametrize("encoding", ["", "gzip"])
def test_a_reply_given_up_at_the_limit_holds_nothing_after(encoding):
    import zlib

    limit = 2**20
    body = b"x" * (3 * limit)
    if encoding:
        packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        body = packer.compress(body) + packer.flush()
    chunks = (body[k:k + 65536] for k in range(0, len(body), 65536))
    with pytest.raises(ValueError, match="past 1 MiB") as caught:
        read_capped(chunks, encoding, limit)
    # the error is kept while its call retries and its session says why it failed: it holds no body
    assert _held_bytes(caught.value) == 0
    # a body of exactly the limit is read whole; one byte more is given up on
    assert len(read_capped(iter([b"y" * (limit // 2)] * 2), "", limit)) == limit
    with pytest.raises(ValueError):
        read_capped(iter([b"y" * (limit // 2), b"y" * (limit // 2 + 1)]), "", limit)


@pytest.mark.parametrize("fn", ["econarena/chat:m", "gpt-4"])
@pytest.mark.e2e
def test_a_reply_that_is_not_utf8_is_recorded_and_scored(tmp_path, odd_bytes_server, fn):
    log = tmp_path / "log.jsonl"
    env = base_env() | {"OPENAI_BASE_URL": odd_bytes_server, "OPENAI_API_KEY": "sk-test"}
    run_cli([cli("oaieval"), fn, "econarena.beauty_L", "--max_samples", "1", "--record_path", str(log)], env)
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    report = next(r["final_report"] for r in rows if "final_report" in r)
    assert report["sessions"] == 1 and report["errored_sessions"] == 0
    replies = [r["data"]["sampled"][0] for r in rows if r.get("type") == "sampling" and "econarena" in r["data"]]
    assert len(replies) == 50 and all(reply == '{"choice": 20} \\xff\\xfe' for reply in replies)
    assert report["rule_following"] == 1.0  # the answer before the bytes was read
