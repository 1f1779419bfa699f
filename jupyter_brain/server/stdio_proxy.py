"""``jupyter-brain mcp``: the endpoint for clients that speak MCP only over stdio.

Each JSON-RPC message read from stdin is POSTed to a running Jupyter server's
``jupyter-brain/mcp`` (with its token and the MCP session id once the server gave one); the
answer, JSON or an SSE stream, is written to stdout one message a line. The server is the one
``--url`` names, else the running server whose root holds the working folder (as
``jupyter server list`` finds them), else the first. Requests run concurrently, so a long
``execute_cell`` does not hold up a ``ping``; ``initialize`` goes first, alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import httpx

from . import MCP_ROUTE

ACCEPT = "application/json, text/event-stream"


def find_server(url: str | None, token: str | None) -> tuple[str, str]:
    """(endpoint URL, token) of the server to talk to; exits with one line when there is none."""
    token = token if token is not None else os.environ.get("JUPYTER_TOKEN", "")
    if url:
        base = url.rstrip("/") + "/"
        return (base if base.endswith(MCP_ROUTE + "/") else base + MCP_ROUTE).rstrip("/"), token
    try:
        from jupyter_server.serverapp import list_running_servers
    except ImportError:
        sys.exit("jupyter-brain mcp: jupyter_server is not installed here; pass --url and --token")
    servers = list(list_running_servers())
    if not servers:
        sys.exit("jupyter-brain mcp: no running Jupyter server found (start one with `jupyter lab`, "
                 "or pass --url and --token)")
    here = Path.cwd().resolve()

    def holds_cwd(info: dict[str, Any]) -> bool:
        root = Path(info.get("root_dir") or info.get("notebook_dir") or "/").resolve()
        return here == root or root in here.parents

    chosen = next((s for s in servers if holds_cwd(s)), servers[0])
    return chosen["url"].rstrip("/") + "/" + MCP_ROUTE, token or chosen.get("token", "")


class Proxy:
    def __init__(self, endpoint: str, token: str, out: Any = None) -> None:
        self.endpoint = endpoint
        self.headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"token {token}"
        self.out = out or sys.stdout
        self._write_lock = threading.Lock()
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=None))

    def write(self, message: Any) -> None:
        with self._write_lock:
            self.out.write(json.dumps(message, separators=(",", ":")) + "\n")
            self.out.flush()

    async def forward(self, message: dict[str, Any]) -> None:
        try:
            async with self.client.stream("POST", self.endpoint, json=message, headers=self.headers) as response:
                if message.get("method") == "initialize" and "mcp-session-id" in response.headers:
                    self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
                if response.status_code in (401, 403):
                    raise ProxyError(f"the server refused the token ({response.status_code}): pass --token")
                if response.status_code == 202:
                    return
                kind = response.headers.get("content-type", "")
                if kind.startswith("text/event-stream"):
                    async for data in _sse_data(response):
                        self._relay(json.loads(data))
                elif kind.startswith("application/json"):
                    self._relay(json.loads(await response.aread()))
                else:
                    body = (await response.aread()).decode("utf-8", "replace")[:200]
                    raise ProxyError(f"HTTP {response.status_code} from {self.endpoint}: {body}")
        except (httpx.HTTPError, ProxyError) as exc:
            reason = str(exc) if isinstance(exc, ProxyError) else f"cannot reach {self.endpoint} ({exc})"
            print(f"jupyter-brain mcp: {reason}", file=sys.stderr, flush=True)
            if "id" in message and "method" in message:
                self.write({"jsonrpc": "2.0", "id": message["id"],
                            "error": {"code": -32000, "message": f"jupyter-brain mcp: {reason}"}})

    def _relay(self, data: Any) -> None:
        if isinstance(data, dict) and data.get("result", {}).get("protocolVersion"):
            self.headers["mcp-protocol-version"] = data["result"]["protocolVersion"]
        self.write(data)

    async def close(self) -> None:
        if "mcp-session-id" in self.headers:
            try:
                await self.client.delete(self.endpoint, headers=self.headers)
            except httpx.HTTPError:
                pass
        await self.client.aclose()


class ProxyError(Exception):
    pass


async def _sse_data(response: httpx.Response) -> Any:
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif not line and data:
            yield "\n".join(data)
            data = []
    if data:
        yield "\n".join(data)


async def serve(proxy: Proxy, stdin: Any = None) -> None:
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str | None] = asyncio.Queue()
    source = stdin or sys.stdin

    def read() -> None:
        for line in source:
            loop.call_soon_threadsafe(lines.put_nowait, line)
        loop.call_soon_threadsafe(lines.put_nowait, None)

    threading.Thread(target=read, name="jupyter-brain-mcp-stdin", daemon=True).start()
    pending: set[asyncio.Task[None]] = set()
    while (line := await lines.get()) is not None:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            proxy.write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        if isinstance(message, dict) and message.get("method") == "initialize":
            await proxy.forward(message)
            continue
        task = asyncio.create_task(proxy.forward(message))
        pending.add(task)
        task.add_done_callback(pending.discard)
    if pending:
        await asyncio.wait(pending)
    await proxy.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="jupyter-brain", description="jupyter-brain's command line.")
    commands = parser.add_subparsers(dest="command", required=True)
    mcp = commands.add_parser("mcp", help="MCP over stdio, for clients that speak only stdio: proxies to a running "
                                          "Jupyter server's jupyter-brain/mcp endpoint")
    mcp.add_argument("--url", help="the server's URL, e.g. http://localhost:8888/ (default: a running server, as "
                                   "`jupyter server list` shows)")
    mcp.add_argument("--token", help="the server's token (default: $JUPYTER_TOKEN, or the running server's)")
    args = parser.parse_args(argv)
    endpoint, token = find_server(args.url, args.token)
    print(f"jupyter-brain mcp: proxying stdio to {endpoint}", file=sys.stderr, flush=True)
    try:
        asyncio.run(serve(Proxy(endpoint, token)))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
