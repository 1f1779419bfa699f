"""The live kernel offered to an outside agent as an MCP server (streamable HTTP, JSON
answers) on 127.0.0.1 with a random bearer token, passed in ``session/new``'s ``mcpServers``.

Its tools run *in the kernel*, on the cell's thread: a call arrives on the server's thread
and is handed to the running turn as an ``Inbound("kernel", ...)``, which runs it between
the agent's updates and answers. So ``execute_code`` changes the notebook's own namespace,
not a subprocess of the agent's, and the permission mode decides it like any execution.

Hand-written (about a hundred lines of JSON-RPC) rather than the MCP SDK's server: that one
needs an ASGI server and an event loop of its own in the kernel; this needs a thread.
Between turns (no turn to hand a call to) a call is answered with an error.
"""

from __future__ import annotations

import concurrent.futures
import json
import queue
import secrets
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .connection import Inbound

SERVER_NAME = "jupyter-kernel"
PROTOCOL = "2025-06-18"
CALL_WAIT_S = 600.0

TOOLS: list[dict[str, Any]] = [
    {"name": "list_variables", "description": "The notebook kernel's user variables: name, type and a short summary.",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "inspect_variable", "description": "One variable of the notebook kernel in detail (shape, columns, "
     "head, repr).", "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                                     "required": ["name"]}},
    {"name": "execute_code", "description": "Run Python code in the live notebook kernel (its variables persist); "
     "returns stdout and the last expression's value.",
     "inputSchema": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}},
]
EFFECTS = {"list_variables": "read", "inspect_variable": "read", "execute_code": "execute"}


class KernelMCPServer:
    """An MCP endpoint whose calls go to whichever inbox the running turn set (``route``)."""

    def __init__(self) -> None:
        self.token = secrets.token_urlsafe(24)
        self._inbox: queue.Queue[Inbound] | None = None
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # no server-initiated stream
                self._send(405, None)

            def do_DELETE(self) -> None:
                self._send(200, None)

            def do_POST(self) -> None:
                if self.headers.get("authorization") != f"Bearer {owner.token}":
                    return self._send(401, {"error": "unauthorized"})
                length = int(self.headers.get("content-length") or 0)
                try:
                    message = json.loads(self.rfile.read(length) or b"null")
                except ValueError:
                    return self._send(400, _error(None, -32700, "parse error"))
                if not isinstance(message, dict) or "id" not in message:
                    return self._send(202, None)  # a notification
                self._send(200, owner.answer(message))

            def _send(self, status: int, body: Any) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("mcp-session-id", "kernel")
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, args=(0.1,), name="kernel-mcp", daemon=True).start()

    @property
    def url(self) -> str:
        port = self._httpd.server_address[1]
        return f"http://127.0.0.1:{port}/mcp"

    def acp_entry(self) -> dict[str, Any]:
        """This server as an ACP ``HttpMcpServer`` (the token in a header, never in the URL)."""
        return {"type": "http", "name": SERVER_NAME, "url": self.url,
                "headers": [{"name": "Authorization", "value": f"Bearer {self.token}"}]}

    def route(self, inbox: queue.Queue[Inbound] | None) -> None:
        with self._lock:
            self._inbox = inbox

    def answer(self, message: dict[str, Any]) -> dict[str, Any]:
        method, mid = message.get("method"), message.get("id")
        if method == "initialize":
            return {"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": (message.get("params") or {}).get("protocolVersion", PROTOCOL),
                "capabilities": {"tools": {}}, "serverInfo": {"name": SERVER_NAME, "version": "1"}}}
        if method == "ping":
            return {"jsonrpc": "2.0", "id": mid, "result": {}}
        if method == "tools/list":
            return {"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}}
        if method != "tools/call":
            return _error(mid, -32601, f"method not found: {method}")
        params = message.get("params") or {}
        name, arguments = str(params.get("name") or ""), params.get("arguments") or {}
        if name not in EFFECTS:
            return _error(mid, -32602, f"unknown tool {name!r}")
        with self._lock:
            inbox = self._inbox
        if inbox is None:
            return _result(mid, "the notebook is not running a turn of this agent now", error=True)
        reply: concurrent.futures.Future[Any] = concurrent.futures.Future()
        inbox.put(Inbound("kernel", "", {"tool": name, "arguments": arguments}, reply))
        try:
            text, failed = reply.result(CALL_WAIT_S)
        except Exception as exc:  # noqa: BLE001 - the turn ended first: the agent hears why
            text, failed = f"the call did not run: {exc}", True
        return _result(mid, text, error=failed)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _result(mid: Any, text: str, *, error: bool = False) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}], "isError": error}}


def _error(mid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}}


KernelTool = Callable[[str, dict[str, Any]], str]
