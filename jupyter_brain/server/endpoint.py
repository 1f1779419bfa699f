"""The MCP server: the tools on the SDK's low-level ``Server``, served by its Streamable
HTTP session manager, whose task group runs on the Jupyter server's own event loop.

``McpEndpoint.handle(scope, receive, send)`` is an ASGI app; ``http_bridge.py`` hands it
Tornado's requests. The manager starts on the first request (the loop is running then) and
stops with the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from jupyter_brain.agent.tool_schema import compact_schema
from jupyter_brain.foundation.version import __version__

from .gate import OutsideSession
from .notebook_tools import NotebookTools
from .tool_specs import SPECS

log = logging.getLogger("jupyter_brain.server")

INSTRUCTIONS = (
    "Work in the notebooks of this Jupyter server, in the kernels the user's tabs use. Paths are relative to the "
    "server's root. Read with read_notebook / read_cell, change cells with insert_cell / edit_cell / delete_cell, "
    "run with execute_cell (outputs are saved in the notebook) or execute_code. Cells you write are marked as yours."
)


def tool_list() -> list[types.Tool]:
    tools = []
    for spec in SPECS:
        schema = compact_schema(spec.args.model_json_schema())  # the in-kernel agent's: no titles, no anyOf-null
        annotations = types.ToolAnnotations(read_only_hint=spec.effect == "read",
                                            destructive_hint=spec.name == "delete_cell")
        tools.append(types.Tool(name=spec.name, description=spec.description, input_schema=schema,
                                annotations=annotations))
    return tools


class McpEndpoint:
    def __init__(self, tools: NotebookTools) -> None:
        self.tools = tools
        self.sessions: dict[str, OutsideSession] = {}
        self._tool_list = tool_list()
        self.server: Server[Any] = Server(
            "jupyter-brain", version=__version__, instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
        )
        self.manager = StreamableHTTPSessionManager(self.server, json_response=False)
        self._running: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()

    # MCP handlers ---------------------------------------------------------------
    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self._tool_list)

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        session = self.session_of(ctx)
        outcome = await self.tools.call(session, params.name, params.arguments)
        content: list[Any] = [types.TextContent(type="text", text=outcome.text)]
        content += [types.ImageContent(type="image", data=im.data, mime_type=im.media_type) for im in outcome.images]
        return types.CallToolResult(content=content, is_error=outcome.is_error)

    def session_of(self, ctx: Any) -> OutsideSession:
        """The outside session of this request: its MCP session id and the client it named.

        A 2025 handshake gives the connection an ``Mcp-Session-Id``; the 2026-07-28 protocol has
        no sessions (each request carries the client's info), so there the client's name and
        version stand for one (its limits and log lines are that client's)."""
        connection = getattr(ctx.session, "_connection", None)  # the SDK keeps the id there (no public name)
        params = getattr(ctx.session, "client_params", None)
        info = getattr(params, "client_info", None)
        name = getattr(info, "name", None) or "unknown client"
        version = getattr(info, "version", None) or ""
        session_id = getattr(connection, "session_id", None)
        if not session_id:
            session_id = "client-" + hashlib.sha256(f"{name}\0{version}".encode()).hexdigest()[:20]
        session = self.sessions.get(session_id)
        if session is None:
            session = self.sessions[session_id] = OutsideSession(session_id, name, version)
        return session

    # the session manager's life -----------------------------------------------------
    async def handle(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.start()
        await self.manager.handle_request(scope, receive, send)

    async def start(self) -> None:
        if self._running is None:
            self._running = asyncio.get_running_loop().create_task(self._run(), name="jupyter-brain-mcp")
        await self._ready.wait()

    async def _run(self) -> None:
        try:
            async with self.manager.run():
                self._ready.set()
                await self._stop.wait()
        except Exception:  # logged for the server operator; requests then fail with 500
            log.exception("jupyter-brain's MCP session manager stopped")
            self._ready.set()

    async def stop(self) -> None:
        """Waiting approvals refused, unsaved edits written, the session manager stopped: the server is shutting down."""
        if self.tools.gate.approvals is not None:
            self.tools.gate.approvals.close()
        await self.tools.store.flush_all()
        self._stop.set()
        if self._running is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._running, 5)
        self.tools.kernels.close()
        self.tools.audit.close()
