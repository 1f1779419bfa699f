"""Helpers for the MCP tests: config entries for the demo server, process checks."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
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


def start_http_demo(script: Path = DEMO, *flags: str) -> tuple[str, subprocess.Popen[bytes]]:
    """The demo server over streamable HTTP on 127.0.0.1: (its URL, its process).

    This side binds the port and hands the listening socket to the server, so no other
    process (a kernel, JupyterLab, another server, in a test run beside this one) can take
    the port between picking it and binding it; a client that connects before the server
    accepts waits in the socket's backlog.
    """
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(16)
        port = listening.getsockname()[1]
        process = subprocess.Popen([sys.executable, str(script), "http", f"fd={listening.fileno()}", *flags],
                                   pass_fds=(listening.fileno(),), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
    return f"http://127.0.0.1:{port}/mcp", process


def pause(seconds: float) -> None:
    """``time.sleep``, which raises EINVAL under faketime with the monotonic clock left real
    (the summer-clock pass of scripts/test.sh); a timed lock wait works there."""
    threading.Event().wait(seconds)


def exit_code(process: subprocess.Popen, within_s: float = 60.0) -> int | None:
    """``process.wait(within_s)`` (which sleeps with ``time.sleep``: see ``pause``); None if
    it is still running then."""
    wait_until(lambda: process.poll() is not None, within_s)
    return process.poll()


def wait_until(condition: Callable[[], object], within_s: float = 60.0, every_s: float = 0.05) -> bool:
    """Poll until ``condition()`` is true. ``within_s`` only bounds the wait so that a broken
    behaviour fails instead of hanging: it is never a measure of speed (assert on the result)."""
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() >= deadline:
            return bool(condition())
        pause(every_s)
    return True


def gone(pid: int, within_s: float = 60.0) -> bool:
    """The process has exited (waiting for it at most ``within_s``)."""
    return wait_until(lambda: not alive(pid), within_s)


def processes_with(marker: str) -> list[int]:
    """Live processes whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def children_running(module: str) -> list[int]:
    """Live child processes of this one started as ``python -m MODULE``."""
    found = []
    for pid in processes_with(module):
        try:
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and b"-m" in argv and module.encode() in argv:
            found.append(pid)
    return found


# the third-party servers of tests/mcp_client/npm (issue #26) ---------------------------------
NPM_DIR = Path(__file__).with_name("npm")


def npm_server(name: str) -> Path:
    """The bin of an npm MCP server installed in tests/mcp_client/npm by `npm ci` (scripts/test.sh
    runs it). Outside CI a missing install skips the test, naming the fix; in CI (CI=true) it fails."""
    path = NPM_DIR / "node_modules" / ".bin" / name
    require_installed(path, f"{name} is not installed: run `npm ci` in {NPM_DIR}")
    return path


def require_installed(path: Path, message: str) -> None:
    """Skip the calling test when ``path`` (or Node) is missing, naming the fix; fail in CI
    (CI=true), where scripts/test.sh installs everything and a missing piece is a broken run."""
    import shutil

    import pytest

    if path.exists() and shutil.which("node") is not None:
        return
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


def npm_entry(name: str, *args: str, **extra) -> dict:
    """An ``mcpServers`` entry running an npm server's bin with the machine's Node, over stdio."""
    return {"command": "node", "args": [str(npm_server(name)), *args], **extra}


def start_everything_http(attempts: int = 5) -> tuple[str, subprocess.Popen[str]]:
    """server-everything in its streamableHttp mode on 127.0.0.1: (its URL, its process).

    It takes its port from $PORT and says "listening on port N" on stderr once it listens (or
    that the port is taken: another free port is tried). Waits on that line, never a sleep."""
    binary = npm_server("mcp-server-everything")
    for _ in range(attempts):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        process = subprocess.Popen(["node", str(binary), "streamableHttp"], env={**os.environ, "PORT": str(port)},
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        said: list[str] = []
        heard = threading.Event()

        def listen(process=process, said=said, heard=heard) -> None:
            assert process.stderr is not None
            for line in process.stderr:
                said.append(line)
                if "listening on port" in line or "already in use" in line or "Failed" in line:
                    heard.set()
            heard.set()  # it exited

        threading.Thread(target=listen, daemon=True).start()
        heard.wait(60)
        if any("listening on port" in line for line in said):
            return f"http://127.0.0.1:{port}/mcp", process
        process.kill()
        exit_code(process)
    raise RuntimeError(f"server-everything did not start over HTTP: {''.join(said)[-500:]}")
