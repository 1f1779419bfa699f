"""A small MCP server for notebooks/mcp_tools.ipynb: a notebook of notes, over stdio.

Built with the official SDK's ``MCPServer`` (called ``FastMCP`` in mcp 1.x). Three tools,
one of each kind a client must handle: one that only reads (``readOnlyHint``), one that
changes something, and one that returns an image. Run it as ``python mcp_notes_server.py``.
"""

from __future__ import annotations

import struct
import zlib

import mcp_types as types
from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("notes", log_level="WARNING")
NOTES = {
    "q3-review": "Q3 revenue grew 12%; churn fell to 3.1%. Next: hire two support engineers.",
    "pricing": "The Pro plan moves from 20 to 24 EUR a month on 1 January.",
}


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def search_notes(query: str) -> str:
    """Search the team's notes; returns the matching notes with their titles."""
    words = query.lower().split()
    found = [f"{title}: {text}" for title, text in NOTES.items()
             if any(w in (title + " " + text).lower() for w in words)]
    return "\n".join(found) or f"no note matches {query!r}"


@server.tool(annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False))
def add_note(title: str, text: str) -> str:
    """Add a note (or replace the note with that title)."""
    if not title.strip():
        raise ToolError("a note needs a title")
    NOTES[title] = text
    return f"saved note {title!r} ({len(NOTES)} notes)"


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def notes_chart() -> Image:
    """A bar chart of the notes' lengths (PNG)."""
    return Image(data=_bars([len(t) for t in NOTES.values()]), format="png")


def _bars(values: list[int]) -> bytes:
    """A tiny PNG: one grey bar per value, 8 pixels wide, height proportional."""
    height, width = 40, 10 * len(values)
    top = max(values) or 1
    rows = []
    for y in range(height):
        row = bytearray(b"\x00")
        for v in values:
            filled = y >= height - round(height * v / top)
            row += (b"\x60\x60\x60" if filled else b"\xff\xff\xff") * 8 + b"\xff\xff\xff" * 2
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows))) + \
        chunk(b"IEND", b"")


if __name__ == "__main__":
    server.run()
