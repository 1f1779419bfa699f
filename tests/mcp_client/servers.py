"""Helpers for the MCP tests: config entries for the demo server, process checks."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

DEMO = Path(__file__).with_name("demo_server.py")


def stdio_entry(*args: str, **extra) -> dict:
    """An ``mcpServers`` entry that runs the demo server over stdio."""
    return {"command": sys.executable, "args": [str(DEMO), *args], **extra}


def write_config(folder: Path, servers: dict) -> Path:
    path = folder / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
