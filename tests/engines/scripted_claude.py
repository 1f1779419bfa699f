"""A scripted Anthropic Messages server for the real ``claude-code-acp`` (issue #36).

Claude Code (through the Agent SDK) sends ``POST /v1/messages?beta=true`` with
``stream: true`` and its tools; each such request takes the next scripted turn (a list of
content blocks: text, thinking, tool_use). A request without tools (a side call, e.g. a
title) or past the end of the script gets a short text answer, so a quirk of the agent never
blocks a test; every request is kept in ``requests``. ``hold`` makes the next reply stop
after its first text delta until ``release`` is set (a turn that is mid-stream).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value}


def tool_use(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": arguments, "id": call_id}


class ScriptedClaude:
    def __init__(self) -> None:
        self.script: deque[list[dict[str, Any]]] = deque()
        self.requests: list[dict[str, Any]] = []
        self.hold = False
        self.release = threading.Event()
        self.holding = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                owner.requests.append({"method": "GET", "path": self.path})
                self.send_response(404)
                self.end_headers()

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                owner.requests.append({"method": "POST", "path": self.path, "body": body})
                if "count_tokens" in self.path:
                    data = json.dumps({"input_tokens": 100}).encode()
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                main = bool(body.get("tools")) and bool(owner.script)
                blocks = owner.script.popleft() if main else [text("ok")]
                owner._stream(self, blocks, body.get("model", "claude-mock"), hold=main and owner.hold)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def push(self, *turns: list[dict[str, Any]]) -> ScriptedClaude:
        self.script.extend(turns)
        return self

    def main_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r.get("body", {}).get("tools")]

    def stop(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _stream(self, h: BaseHTTPRequestHandler, blocks: list[dict[str, Any]], model: str, *, hold: bool) -> None:
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.end_headers()

        def send(kind: str, data: dict[str, Any]) -> None:
            h.wfile.write(f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode())
            h.wfile.flush()

        usage = {"input_tokens": 50, "output_tokens": 1}
        send("message_start", {"message": {"id": "msg_scripted", "type": "message", "role": "assistant",
                                           "model": model, "content": [], "stop_reason": None,
                                           "stop_sequence": None, "usage": usage}})
        for i, block in enumerate(blocks):
            if block["type"] == "text":
                send("content_block_start", {"index": i, "content_block": {"type": "text", "text": ""}})
                words = block["text"].split(" ")
                for n, word in enumerate(words):
                    send("content_block_delta", {"index": i, "delta": {
                        "type": "text_delta", "text": word + (" " if n < len(words) - 1 else "")}})
                    if hold and n == 0:
                        self.holding.set()
                        if not self.release.wait(60):
                            return
            elif block["type"] == "thinking":
                send("content_block_start", {"index": i, "content_block": {"type": "thinking", "thinking": ""}})
                send("content_block_delta", {"index": i, "delta": {"type": "thinking_delta", "thinking": block["thinking"]}})
                send("content_block_delta", {"index": i, "delta": {"type": "signature_delta", "signature": "sig"}})
            else:
                send("content_block_start", {"index": i, "content_block": {
                    "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})
                send("content_block_delta", {"index": i, "delta": {
                    "type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
            send("content_block_stop", {"index": i})
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        send("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 9}})
        send("message_stop", {})
