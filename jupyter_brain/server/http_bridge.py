"""Tornado to ASGI, just enough for MCP's Streamable HTTP: the Jupyter server's handler
authenticates the request (its token, or the hub's OAuth) and hands it to the endpoint.

A POST's answer may be JSON or an SSE stream; a GET opens the session's SSE stream; a
DELETE ends the session. Each ``http.response.body`` chunk is flushed as it comes, so
streamed events reach the client at once; a client that goes away is told to the ASGI app
as ``http.disconnect``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from jupyter_server.base.handlers import APIHandler
from tornado import web
from tornado.iostream import StreamClosedError


class McpHandler(APIHandler):
    """``{base_url}jupyter-brain/mcp``: MCP over Streamable HTTP, behind Jupyter's auth."""

    _track_activity = True

    def initialize(self, endpoint: Any) -> None:
        self.endpoint = endpoint
        self._disconnected = asyncio.Event()
        self._started = False

    @web.authenticated
    async def get(self) -> None:
        await self._serve()

    @web.authenticated
    async def post(self) -> None:
        await self._serve()

    @web.authenticated
    async def delete(self) -> None:
        await self.endpoint.tools.store.flush_all()  # the session ends: its edits are on disk when it has ended
        await self._serve()

    def on_connection_close(self) -> None:
        self._disconnected.set()

    def finish(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("set_content_type", self._headers.get("Content-Type", "application/json"))
        return super().finish(*args, **kwargs)

    async def _serve(self) -> None:
        request = self.request
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": request.method, "scheme": request.protocol,
            "path": request.path, "raw_path": request.path.encode(), "root_path": "",
            "query_string": request.query.encode(),
            "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.get_all()],
            "client": (request.remote_ip, 0), "server": (request.host_name, 0),
        }
        body_sent = False

        async def receive() -> dict[str, Any]:
            nonlocal body_sent
            if not body_sent:
                body_sent = True
                return {"type": "http.request", "body": request.body or b"", "more_body": False}
            await self._disconnected.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if self._disconnected.is_set():
                return
            if message["type"] == "http.response.start":
                self._started = True
                self.set_status(message["status"])
                self.clear_header("Content-Type")
                for key, value in message.get("headers", []):
                    self.add_header(key.decode("latin-1"), value.decode("latin-1"))
            elif message["type"] == "http.response.body":
                chunk = message.get("body", b"")
                if chunk:
                    self.write(chunk)
                if message.get("more_body", False):
                    try:
                        await self.flush()
                    except StreamClosedError:
                        self._disconnected.set()

        await self.endpoint.handle(scope, receive, send)
        if not self._finished and not self._disconnected.is_set():
            self.finish()
