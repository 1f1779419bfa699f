"""A small MCP server for the tests, built with the SDK's MCPServer (FastMCP in mcp 1.x).

    python demo_server.py                 # stdio
    python demo_server.py http PORT       # streamable HTTP on 127.0.0.1:PORT/mcp
    python demo_server.py http fd=N       # the same on an inherited listening socket
    python demo_server.py fail            # writes to stderr (with $DEMO_TOKEN) and exits: cannot start

Its tools cover what a client must handle: a read-only tool, a destructive one, an image,
an embedded resource, an error result, a large result, a crash, a hang, progress with a
noted cancellation (``slow``), a tool list that changes (``grow``). ``started``
tells how many calls of a tool the server has begun, so a test can check what was sent.
"""

from __future__ import annotations

import hashlib
import os
import struct
import sys
import zlib
from collections import Counter
from typing import Annotated

import anyio
import mcp_types as types
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, Image, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit
from pydantic import BaseModel, Field

server = MCPServer("demo", instructions="A demo server for jupyter-brain's tests.", log_level="WARNING")
ITEMS = {"apple": "red", "banana": "yellow"}
STARTED: Counter[str] = Counter()  # tool name -> calls begun


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def lookup(key: str) -> str:
    """Look up the colour of a fruit."""
    return ITEMS.get(key, f"no entry for {key!r}")


@server.tool(annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=True))
def delete_item(key: str) -> str:
    """Delete a fruit from the store."""
    ITEMS.pop(key, None)
    return f"deleted {key}"


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def chart() -> Image:
    """Draw a chart (a 2x2 red PNG)."""
    return Image(data=_png(2, 2), format="png")


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def readme() -> types.EmbeddedResource:
    """The README as an embedded resource."""
    return types.EmbeddedResource(
        resource=types.TextResourceContents(uri="file:///demo/README.md", mime_type="text/markdown",
                                            text="# Demo\nA demo server.")
    )


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def fail(message: str = "something broke") -> str:
    """Always fails (the server returns an error result)."""
    raise ToolError(message)


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def big(n: int = 50_000) -> str:
    """Return n characters."""
    return "x" * n


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def env_value(name: str) -> str:
    """The value of an environment variable of the server process."""
    return os.environ.get(name, "<unset>")


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def env_digest(name: str) -> str:
    """The SHA-256 of an environment variable of the server process."""
    return hashlib.sha256(os.environ.get(name, "").encode()).hexdigest()


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def crash() -> str:
    """Kill the server process in the middle of the call."""
    os._exit(3)


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
async def hang(seconds: float = 3600.0) -> str:
    """Sleep far longer than any timeout."""
    STARTED["hang"] += 1
    await anyio.sleep(seconds)
    return "woke up"


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
async def slow(ctx: Context, seconds: float = 3600.0) -> str:
    """Report progress once, then sleep; a cancellation is written to stderr (the test reads it)."""
    await ctx.report_progress(1, 2, "started")
    await ctx.info("slow: started")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        print("demo: slow was cancelled by the client", file=sys.stderr, flush=True)
        raise
    return "done"


@server.tool(annotations=types.ToolAnnotations(read_only_hint=False))
async def grow(ctx: Context) -> str:
    """Add the tool ``grown`` and tell the client that the tool list changed."""
    server.add_tool(_grown, name="grown", annotations=types.ToolAnnotations(read_only_hint=True))
    await ctx.notify_tools_changed()  # to subscriptions/listen streams (the 2026-07-28 protocol)
    return "added the tool grown"


class Colour(BaseModel):
    colour: str = Field(description="your favourite colour")


def _which_colour() -> Elicit[Colour]:
    return Elicit("Which colour?", Colour)


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def ask_colour(answer: Annotated[ElicitationResult[Colour], Resolve(_which_colour)]) -> str:
    """Ask the user for a colour (elicitation: on 2026-07-28 an ``input_required`` result the
    client answers and retries; on 2025-11-25 an ``elicitation/create`` request)."""
    return f"accept: {answer.data.colour}" if answer.action == "accept" else answer.action


def _grown() -> str:
    """A tool that exists only after ``grow`` ran."""
    return "grown here"


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def started(name: str) -> int:
    """How many calls of a tool this server has begun (only counted for ``hang``)."""
    return STARTED[name]


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "fail":
        token = os.environ.get("DEMO_TOKEN", "")
        print(f"demo: cannot open the database at /nonexistent/db.sqlite (token {token})", file=sys.stderr)
        sys.exit(2)
    if mode == "http" and sys.argv[2].startswith("fd="):
        # A listening socket the test bound and handed over (tests/mcp_client/conftest.py):
        # no port is picked, freed and bound again, which another process could take between.
        import socket

        import uvicorn

        listening = socket.socket(fileno=int(sys.argv[2][3:]))
        app = server.streamable_http_app(host="127.0.0.1")
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listening])
    elif mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
