"""``econarena-serve PLAYER``: a built-in player (``econarena/nash``, ``econarena/level2``, ...) as an
OpenAI-compatible chat endpoint on 127.0.0.1, so ``vf-eval`` (or any harness that speaks the chat
completions API) plays it with no key and no network.

The player is the registry's, the same object the plugin's completion fn and the inspect model wrap
(``on_inspect.cells.builtin_player``): it reads the prompt's text back (``core.prompts.prompt_text``)
and answers from it and the request's ``seed``, so a seat answered here answers as under ``oaieval``.
It serves ``POST /v1/chat/completions`` and ``GET /v1/models``; a request body is read within
``MAX_BODY`` bytes and typed before use, and a bad one is a 400 that names what is wrong.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional, Sequence

from ..core.prompts import prompt_text
from ..on_inspect.cells import PROVIDER, builtin_player

MAX_BODY = 8 * 1024 * 1024  # a seat's prompt is a few KB; a history cell's stays far below this
HOST = "127.0.0.1"


def player_name(name: str) -> str:
    """``nash`` or ``econarena/nash`` -> ``nash`` (the registry's name within the namespace)."""
    return name[len(PROVIDER) + 1:] if name.startswith(PROVIDER + "/") else name


def _messages(body: Any) -> list[dict[str, str]]:
    """The request's chat messages as the player reads them; ValueError naming what is wrong."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or not messages:
        raise ValueError("'messages' must be a non-empty list")
    out = []
    for m in messages:
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            raise ValueError("each message must have a string 'role' and a string 'content'")
        out.append({"role": m["role"], "content": m["content"]})
    return out


def _seed(body: dict[str, Any]) -> Optional[int]:
    seed = body.get("seed")
    if seed is None:
        return None
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError("'seed' must be an integer")
    return seed


class PlayerServer:
    """One built-in player behind an HTTP server; ``start`` serves on a thread, ``serve`` in the foreground."""

    def __init__(self, name: str, args: Optional[dict[str, Any]] = None) -> None:
        self.name = PROVIDER + "/" + player_name(name)
        self.player = builtin_player(player_name(name), dict(args or {}))
        self._lock = threading.Lock()
        self.answered = 0  # chat completions answered, for the user's count and the tests
        self._server: Optional[ThreadingHTTPServer] = None

    def complete(self, body: Any) -> dict[str, Any]:
        """The chat completion the player gives ``body``; ValueError for a body that is none."""
        messages = _messages(body)
        text = prompt_text(messages)
        reply = self.player.reply(text, _seed(body))
        prompt_tokens, completion_tokens = max(1, len(text) // 4), max(1, len(reply) // 4)
        with self._lock:
            self.answered += 1
            n = self.answered
        return {"id": f"chatcmpl-econarena-{n}", "object": "chat.completion", "created": 0, "model": self.name,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply}}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _error(self, status: int, message: str) -> None:
                self._send(status, {"error": {"message": message, "type": "invalid_request_error",
                                              "param": None, "code": None}})

            def do_GET(self) -> None:
                if self.path.split("?")[0].rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": server.name, "object": "model", "created": 0,
                                                                 "owned_by": PROVIDER}]})
                else:
                    self._error(404, f"no route {self.path}")

            def do_POST(self) -> None:
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                except ValueError:
                    length = -1
                if not 0 < length <= MAX_BODY:
                    self.close_connection = True
                    self._error(413 if length > MAX_BODY else 400,
                                f"a request body of 1 to {MAX_BODY} bytes with its Content-Length is needed")
                    return
                raw = self.rfile.read(length)
                if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":
                    self._error(404, f"no route {self.path}: this server answers POST /v1/chat/completions")
                    return
                try:
                    body = json.loads(raw)
                    answer = server.complete(body)
                except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
                    self._error(400, f"not a chat completion request: {exc}")
                    return
                self._send(200, answer)

        return Handler

    def start(self, port: int = 0) -> "PlayerServer":
        """Serve on ``port`` (0: one the system picks) on a daemon thread."""
        self._server = ThreadingHTTPServer((HOST, port), self._handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://{HOST}:{self._server.server_address[1]}/v1"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(prog="econarena-serve", description=" ".join(__doc__.split("\n\n")[0].split()).replace("``", ""))
    parser.add_argument("player", help="a built-in player: nash, level2, human, ... (econarena/ may lead)")
    parser.add_argument("--port", type=int, default=8000, help="the port on 127.0.0.1 (0: a free one); default 8000")
    parser.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                        help="a player arg over the registry's (JSON value), e.g. --arg tau=2; repeatable")
    opts = parser.parse_args(argv)
    args: dict[str, Any] = {}
    for item in opts.arg:
        name, sep, value = item.partition("=")
        if not sep or not name:
            parser.error(f"--arg takes NAME=VALUE, got {item!r}")
        try:
            args[name] = json.loads(value)
        except ValueError:
            args[name] = value
    try:
        server = PlayerServer(opts.player, args)
        server.start(opts.port)
    except (ValueError, TypeError, OSError) as exc:
        print(f"econarena-serve: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    # Ctrl-C or SIGTERM stops it (a shell's background job ignores SIGINT: left ignored). Both handlers go
    # in before the address line: a harness that reads the line and signals at once must find them there,
    # whatever this thread was doing when the signal came (a KeyboardInterrupt raised before the wait
    # began would end the process by SIGINT).
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, lambda *_: stop.set())
    # one line a harness can read the address from
    print(f"econarena-serve: {server.name} at {server.base_url} (model name {server.name}); Ctrl-C or SIGTERM stops",
          flush=True)
    try:
        while not stop.wait(0.2):  # a timed wait: the handlers run on this thread between waits
            pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
