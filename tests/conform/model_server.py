#!/usr/bin/env python3
"""An OpenAI-compatible model server on loopback, for running `acp-cli conform` against an
agent driven by a model (tests/conform/table.sh's Agentao row). Standard library only.

    python3 model_server.py            # binds 127.0.0.1:0, prints the port on stdout, serves

It answers `POST .../chat/completions` with a fixed assistant reply, streamed as
server-sent events when the request says `"stream": true` (with a usage chunk when
`stream_options.include_usage` asks for one) and as one JSON completion otherwise, and
`GET .../models` with the one model it serves. It never calls a tool.

Two replies, chosen by the last user message, so conform's prompt cases see a real turn:
- a prompt that asks for an essay (conform's "Write a long, detailed essay ..." that
  it sends to keep a turn running when the agent has no `/sleep`) is streamed slowly, one
  word every 100 ms for about 6 s, so a cancel arrives while the turn runs; the stream
  stops when the client closes the connection (a cancelled turn);
- anything else gets one short sentence at once.
"""

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "conform-model"
SHORT = "Hello from the conform model server."
LONG_WORDS = 60
LONG_PAUSE = 0.1


def last_user_text(body):
    """The text of the request's last user message (string or content parts)."""
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return " ".join(
                    p.get("text", "") for p in content if isinstance(p, dict)
                )
    return ""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        """Quiet: the agent's stderr is what conform shows, not ours."""

    def send_json(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self.send_json(200, {"object": "list", "data": [
                {"id": MODEL, "object": "model", "created": 0, "owned_by": "conform"}]})
        else:
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self.send_json(400, {"error": {"message": "body is not JSON"}})
            return
        text = last_user_text(body)
        long = "essay" in text.lower()
        words = [f"word{i} " for i in range(LONG_WORDS)] if long else [SHORT]
        model = body.get("model") or MODEL
        if body.get("stream"):
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self.stream(model, words, LONG_PAUSE if long else 0.0, usage)
        else:
            self.send_json(200, {
                "id": "chatcmpl-conform", "object": "chat.completion", "created": 0,
                "model": model,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "".join(words)}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": len(words),
                          "total_tokens": 1 + len(words)},
            })

    def stream(self, model, words, pause, usage):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def chunk(delta, finish=None, extra=None):
            value = {"id": "chatcmpl-conform", "object": "chat.completion.chunk",
                     "created": 0, "model": model,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if extra:
                value.update(extra)
            self.wfile.write(b"data: " + json.dumps(value).encode() + b"\n\n")
            self.wfile.flush()

        try:
            chunk({"role": "assistant", "content": ""})
            for i, word in enumerate(words):
                if i and pause:
                    time.sleep(pause)
                chunk({"content": word})
            chunk({}, "stop")
            if usage:
                value = {"id": "chatcmpl-conform", "object": "chat.completion.chunk",
                         "created": 0, "model": model, "choices": [],
                         "usage": {"prompt_tokens": 1, "completion_tokens": len(words),
                                   "total_tokens": 1 + len(words)}}
                self.wfile.write(b"data: " + json.dumps(value).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client closed the stream: a cancelled turn


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
