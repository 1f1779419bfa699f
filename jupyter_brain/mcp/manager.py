"""The kernel's MCP servers: started on the first turn that offers tools, kept for the
kernel's life on one background loop, stopped at exit, restarted after a crash.

``MCPManager.tools(config_file)`` is what a turn calls: it brings the running servers in
line with the file (new ones start, removed or changed ones stop) and returns their
tools as ``ToolSpec``s. Everything blocking is bounded; nothing here raises into a turn.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..agent.artifacts import ArtifactStore
from ..agent.images import ToolResult
from ..agent.tools import TOOL_CALL_TIMEOUT_S, ToolError, ToolSpec
from .adapter import tool_spec
from .config import ServerConfig, load_servers
from .connection import FAILED, RUNNING, STARTUP_TIMEOUT_S, STOP_TIMEOUT_S, ServerConnection
from .loop import BackgroundLoop, LoopTimeout
from .results import render_rich

Report = Callable[[str], None]

# The executor gives up on a tool's call at the tool's timeout: a timeout, which blocks the
# tool for the rest of the turn. The server is asked to answer within this much longer, so
# its own timeout never overtakes the executor's (it would arrive first, on a busy machine,
# as an ordinary error that leaves the tool unblocked); it only frees the worker thread.
SERVER_GRACE_S = 5.0


class MCPManager:
    def __init__(self, *, startup_timeout_s: float = STARTUP_TIMEOUT_S, tool_timeout_s: float | None = None,
                 artifacts: ArtifactStore | None = None) -> None:
        self.startup_timeout_s = startup_timeout_s
        self.tool_timeout_s = tool_timeout_s
        self.artifacts = artifacts or ArtifactStore()
        self._own_artifacts = artifacts is not None
        self.loop = BackgroundLoop()
        self.connections: dict[str, ServerConnection] = {}
        self.config_errors: dict[str, str] = {}
        self._specs: dict[str, tuple[int, list[ToolSpec]]] = {}  # server -> (generation, specs)
        self._reported: set[tuple[str, str]] = set()
        self._lock = threading.RLock()
        self._closed = False

    # the turn's entry point ------------------------------------------------------
    def tools(self, config_file: str | Path, report: Report | None = print) -> list[ToolSpec]:
        """Start what the file lists and is not running; the tools of all running servers."""
        config_file = Path(config_file)
        if self._closed:
            return []
        artifacts_root = config_file.parent / "artifacts"
        if not self._own_artifacts and self.artifacts.root != artifacts_root:
            self.artifacts = ArtifactStore(artifacts_root)
        configs, errors = load_servers(config_file)
        with self._lock:
            self.config_errors = errors
            self._sync(configs)
            pending = [c for c in self.connections.values() if c.state not in (RUNNING, FAILED)]
            unstarted: list[str] = []
            if pending:
                budget = self._start_budget(pending)
                self._run(_start_all(pending), budget)
                # The bound ran out before a start ended either way (a very busy machine):
                # said each time, never silent; the next turn tries again.
                unstarted = [f"MCP server '{c.name}' did not start within {budget:g}s; its tools are left "
                             f"out of this turn and the next turn tries again."
                             for c in pending if c.state not in (RUNNING, FAILED)]
            specs: list[ToolSpec] = []
            taken: set[str] = set()
            for connection in self.connections.values():
                if connection.state == RUNNING:
                    specs += self._tool_specs(connection, taken)
        if report is not None:
            for line in self._new_problems() + unstarted:
                report(line)
        return specs

    def use_artifacts(self, store: ArtifactStore) -> None:
        """Save images in this store (default: ``artifacts/`` beside the config file)."""
        self.artifacts, self._own_artifacts = store, True

    def _sync(self, configs: dict[str, ServerConfig]) -> None:
        for name in list(self.connections):
            if name not in configs or self.connections[name].config != configs[name]:
                self._stop_connection(name)
        for name, config in configs.items():
            if name not in self.connections:
                self.connections[name] = ServerConnection(config, startup_timeout_s=self.startup_timeout_s)

    def _tool_specs(self, connection: ServerConnection, taken: set[str]) -> list[ToolSpec]:
        cached = self._specs.get(connection.name)
        if cached is not None and cached[0] == connection.generation:
            taken.update(s.name for s in cached[1])
            return cached[1]
        timeout = connection.config.tool_timeout_s or self.tool_timeout_s
        specs: list[ToolSpec] = []
        for tool in connection.tools:
            try:
                specs.append(tool_spec(connection.name, tool, self._caller(connection.name, tool.name, timeout),
                                       timeout_s=timeout, taken=taken))
            except Exception as exc:  # noqa: BLE001 - one odd schema must not hide the server's other tools
                self.config_errors[f"{connection.name}:{tool.name}"] = (
                    f"server {connection.name!r}: tool {tool.name!r} left out ({type(exc).__name__}: {exc})")
        self._specs[connection.name] = (connection.generation, specs)
        return specs

    def _caller(self, server: str, tool: str, timeout_s: float | None) -> Callable[..., str]:
        def call(**arguments: Any) -> str:
            return self.call(server, tool, arguments, timeout_s, grace_s=SERVER_GRACE_S)

        call.__name__ = f"{server}__{tool}"
        return call

    # calls (from the executor's worker threads) ---------------------------------------
    def call(self, server: str, tool: str, arguments: dict[str, Any],
             timeout_s: float | None = None, *, grace_s: float = 0.0) -> str | ToolResult:
        """``tools/call``; the server has ``timeout_s`` (the tool's) plus ``grace_s`` to answer."""
        timeout = float(timeout_s or TOOL_CALL_TIMEOUT_S) + max(0.0, grace_s)
        connection = self.connections.get(server)
        if connection is None or self._closed:
            raise ToolError(f"MCP server '{server}' is no longer configured")
        # The executor gives up at `timeout`; the bound here only frees this thread.
        budget = timeout + connection.startup_timeout_s + 2 * STOP_TIMEOUT_S + 2.0
        try:
            result = self.loop.run(connection.call(tool, arguments, timeout), budget)
        except LoopTimeout:
            raise ToolError(f"MCP server '{server}' did not answer within {timeout:g}s") from None
        try:
            rich = render_rich(result, self.artifacts)
            text = connection.scrub(rich.text)
            return ToolResult(text, rich.images) if rich.images else text
        except ToolError as exc:
            raise ToolError(connection.scrub(str(exc))) from None

    # %agent mcp ... ---------------------------------------------------------------------
    def status(self) -> dict[str, ServerConnection]:
        return dict(self.connections)

    def restart(self, name: str) -> ServerConnection | None:
        connection = self.connections.get(name)
        if connection is not None:
            self._run(connection.restart(), connection.startup_timeout_s + 2 * STOP_TIMEOUT_S + 2.0)
            self._reported = {r for r in self._reported if r[0] != name}
        return connection

    def stop(self, name: str) -> None:
        with self._lock:
            self._stop_connection(name)

    def _stop_connection(self, name: str) -> None:
        connection = self.connections.pop(name, None)
        self._specs.pop(name, None)
        self._reported = {r for r in self._reported if r[0] != name}
        if connection is not None and self.loop.running:
            self._run(connection.stop(), 2 * STOP_TIMEOUT_S + 2.0)

    def shutdown(self) -> None:
        """Stop every server (their process groups end with them) and the loop."""
        with self._lock:
            self._closed = True
            connections = list(self.connections.values())
            self.connections.clear()
            self._specs.clear()
            if connections and self.loop.running:
                self._run(_stop_all(connections), 2 * STOP_TIMEOUT_S + 3.0)
            self.loop.stop()

    # helpers ----------------------------------------------------------------------------
    def _run(self, coro: Any, timeout: float) -> Any:
        try:
            return self.loop.run(coro, timeout)
        except LoopTimeout:
            return None

    def _start_budget(self, pending: list[ServerConnection]) -> float:
        return max(c.startup_timeout_s for c in pending) + 2 * STOP_TIMEOUT_S + 2.0

    def _new_problems(self) -> list[str]:
        lines = []
        for name, error in self.config_errors.items():
            if (name, error) not in self._reported:
                self._reported.add((name, error))
                lines.append(f"MCP config: {error}")
        for name, connection in self.connections.items():
            if connection.state == FAILED and connection.error and (name, connection.error) not in self._reported:
                self._reported.add((name, connection.error))
                lines.append(f"MCP server '{name}' failed to start: {connection.error}\n"
                             f"Its tools are left out; `%agent mcp restart {name}` tries again.")
        return lines


async def _start_all(connections: list[ServerConnection]) -> None:
    await asyncio.gather(*(c.ensure_started() for c in connections), return_exceptions=True)


async def _stop_all(connections: list[ServerConnection]) -> None:
    await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)


# the kernel's one manager -------------------------------------------------------------------
_KERNEL: MCPManager | None = None
_KERNEL_LOCK = threading.Lock()


def kernel_manager() -> MCPManager:
    """The manager of this process; its servers stop when the interpreter exits."""
    global _KERNEL
    with _KERNEL_LOCK:
        if _KERNEL is None or _KERNEL._closed:
            _KERNEL = MCPManager()
            atexit.register(_KERNEL.shutdown)
        return _KERNEL


def shutdown_kernel_manager() -> None:
    global _KERNEL
    with _KERNEL_LOCK:
        manager, _KERNEL = _KERNEL, None
    if manager is not None:
        manager.shutdown()
        atexit.unregister(manager.shutdown)
