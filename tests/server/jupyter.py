"""A real Jupyter server with jupyter-brain's extension, and an MCP SDK client for it.

The server runs in a subprocess on a free port of 127.0.0.1 with a token, from this Python
(its kernels too, so they import the jupyter_brain under test through PYTHONPATH). Only the
extension under test is loaded (JupyterLab's own server extensions are switched off: they
only slow the start). Waits are bounded only so that a broken behaviour fails, not hangs.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 180
EXTENSIONS = ("{'jupyter_brain.server': True, 'jupyterlab': False, 'jupyter_lsp': False, "
              "'notebook_shim': False, 'jupyter_server_terminals': False, 'nbclassic': False, 'notebook': False, "
              "'jupyter_server_ydoc': False, 'jupyter_server_fileid': False}")  # no collaboration unless asked
# … and with it: notebooks open in tabs are shared documents (jupyter-collaboration, tests/server/test_live_document.py)
COLLABORATION = EXTENSIONS.replace("'jupyter_server_ydoc': False, 'jupyter_server_fileid': False",
                                   "'jupyter_server_ydoc': True, 'jupyter_server_fileid': True")


@dataclass
class RunningServer:
    url: str
    token: str
    root: Path
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def endpoint(self) -> str:
        return self.url + "jupyter-brain/mcp"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


PORT_TAKEN = "could not be started because port"  # jupyter_server's line when the port went to another process
PORT_ATTEMPTS = 3


def start_server(root: Path, *extra: str, token: str = "test-token-123456", extensions: str = EXTENSIONS) -> RunningServer:
    """A server on a free port; again on another port when the one picked was taken before the
    server bound it (other processes of the run start servers too: CI run R6 lost that race)."""
    for _ in range(PORT_ATTEMPTS - 1):
        try:
            return _start_server(root, extra, token, extensions)
        except RuntimeError as exc:
            if PORT_TAKEN not in str(exc):
                raise
    return _start_server(root, extra, token, extensions)


def _start_server(root: Path, extra: tuple[str, ...], token: str, extensions: str) -> RunningServer:
    port = free_port()
    log = root.parent / f"jupyter-server-{port}.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "JUPYTER_RUNTIME_DIR": str(root.parent / "runtime"), "JUPYTER_PLATFORM_DIRS": "1"}
    command = [sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root", f"--port={port}",
               "--port-retries=0", "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={root}", f"--ServerApp.jpserver_extensions={extensions}", *extra]
    process = subprocess.Popen(command, cwd=root, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    server = RunningServer(f"http://127.0.0.1:{port}/", token, root, process, log)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the Jupyter server exited ({process.returncode}):\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(server.url + "api/status", headers={"Authorization": f"token {token}"}, timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    server.stop()
    raise RuntimeError(f"the Jupyter server did not start in {START_TIMEOUT_S} s:\n{log.read_text()[-3000:]}")


@dataclass
class Reply:
    text: str
    images: list[Any]
    is_error: bool


def _reply(result: Any) -> Reply:
    texts = [b.text for b in result.content if b.type == "text"]
    images = [b for b in result.content if b.type == "image"]
    return Reply("\n".join(texts), images, bool(result.is_error))


def call_tools(server: RunningServer, calls: list[tuple[str, dict[str, Any]]], *, client_name: str = "test-client",
               token: str | None = None) -> list[Reply]:
    """Each (tool, arguments) called in order, in one MCP session over HTTP."""
    return anyio.run(_call_tools, server, calls, client_name, token)


async def _call_tools(server: RunningServer, calls: list[tuple[str, dict[str, Any]]], client_name: str,
                      token: str | None) -> list[Reply]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import Implementation

    headers = {"Authorization": f"token {token or server.token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http:
        async with Client(streamable_http_client(server.endpoint, http_client=http),
                          client_info=Implementation(name=client_name, version="9.9")) as client:
            return [_reply(await client.call_tool(name, args)) for name, args in calls]


def list_tool_names(server: RunningServer) -> list[str]:
    async def names() -> list[str]:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        async with httpx2.AsyncClient(headers={"Authorization": f"token {server.token}"}) as http:
            async with Client(streamable_http_client(server.endpoint, http_client=http)) as client:
                return [t.name for t in (await client.list_tools()).tools]

    return anyio.run(names)


def write_notebook(path: Path, sources: list[str | tuple[str, str]], outputs: dict[int, list[Any]] | None = None) -> None:
    """A notebook of code cells (or (cell_type, source) pairs), with saved outputs by index."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for i, source in enumerate(sources):
        kind, text = source if isinstance(source, tuple) else ("code", source)
        cell = nbformat.v4.new_markdown_cell(text) if kind == "markdown" else nbformat.v4.new_code_cell(text)
        if outputs and i in outputs:
            cell.outputs = outputs[i]
        nb.cells.append(cell)
    nbformat.write(nb, path)


SAVED_WITHIN_S = 30  # the server saves an agent's edits a moment after it answers (SAVE_MAX_DELAY_S), sooner when idle


def saved_notebook(path: Path, ready: Any) -> Any:
    """The notebook file once ``ready(nb)`` holds, or as it is after ``SAVED_WITHIN_S`` (the test's
    asserts then say what is missing): edits are answered first and saved just after."""
    import nbformat

    deadline = time.monotonic() + SAVED_WITHIN_S
    while True:
        late = time.monotonic() > deadline
        try:
            nb = nbformat.read(path, as_version=4)
        except (OSError, ValueError):  # being written at that instant: read again
            if late:
                raise
            nb = None
        if nb is not None and (late or ready(nb)):
            return nb
        time.sleep(0.1)
