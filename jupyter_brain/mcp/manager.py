"""The kernel's MCP servers: started on the first turn that offers tools, kept for the
kernel's life on one background loop, stopped at exit, restarted after a crash.

``MCPManager.tools(config_file)`` is what a turn calls: it brings the running servers in
line with the file (new ones start, removed or changed ones stop) and returns their
tools as ``ToolSpec``s. Everything blocking is bounded; nothing here raises into a turn.
``resources``/``read_resource`` and ``prompts``/``get_prompt`` serve ``%agent mcp`` and a turn's
``--resource``/``--mcp-prompt`` (``catalog.py``); ``set_sampler`` and ``set_roots`` say how the
kernel answers servers' sampling and roots requests (``client_hooks.py``).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..agent.artifacts import ArtifactStore
from ..agent.images import ToolResult
from ..agent.tool_context import ToolContext, current_tool_context
from ..agent.tools import TOOL_CALL_TIMEOUT_S, ToolError, ToolSpec
from . import catalog
from .adapter import tool_spec
from .catalog import PromptInfo, ResourceInfo
from .client_hooks import ClientHooks, Sampler
from .config import ServerConfig, load_servers
from .connection import FAILED, RUNNING, STARTUP_TIMEOUT_S, STOP_TIMEOUT_S, ServerConnection
from .elicitation import Elicitor
from .loop import BackgroundLoop, LoopTimeout
from .results import render_rich

Report = Callable[[str], None]

# The executor gives up on a tool's call at the tool's timeout: a timeout, which blocks the
# tool for the rest of the turn. The server is asked to answer within this much longer, so
# its own timeout never overtakes the executor's (it would arrive first, on a busy machine,
# as an ordinary error that leaves the tool unblocked); it only frees the worker thread.
SERVER_GRACE_S = 5.0
USER_WAIT_SLICE_S = 1.0  # while the user is asked, how often this thread looks at its bound again
REQUEST_TIMEOUT_S = 30.0  # a listing, a resource read, a prompt


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
        self._specs: dict[str, tuple[tuple[int, int], list[ToolSpec]]] = {}  # server -> ((generation, tools_version), specs)
        self._left_out: dict[str, dict[str, str]] = {}  # server -> its tools left out, and why
        self._reported: set[tuple[str, str]] = set()
        self._lock = threading.RLock()
        self._closed = False
        self.hooks = ClientHooks()
        # Why a configured server may not connect (the admin's policy, issue #38), or None.
        self.admit: Callable[[str], str | None] | None = None

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
        if self.admit is not None:  # refused before any connection
            for name in list(configs):
                reason = self.admit(name)
                if reason is not None:
                    del configs[name]
                    errors[name] = reason
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
            stale = [c for c in self.connections.values() if c.state == RUNNING and c.tools_stale]
            if stale:  # they said their tool list changed
                self._run(_refresh_all(stale), REQUEST_TIMEOUT_S + 2.0)
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
                self.connections[name] = ServerConnection(config, startup_timeout_s=self.startup_timeout_s,
                                                          hooks=self.hooks)

    def _tool_specs(self, connection: ServerConnection, taken: set[str]) -> list[ToolSpec]:
        cached = self._specs.get(connection.name)
        if cached is not None and cached[0] == (connection.generation, connection.tools_version):
            taken.update(s.name for s in cached[1])
            self.config_errors.update(self._left_out.get(connection.name, {}))  # still said once
            return cached[1]
        timeout = connection.config.tool_timeout_s or self.tool_timeout_s
        specs: list[ToolSpec] = []
        left_out: dict[str, str] = {}
        for tool in connection.tools:
            key = f"{connection.name}:{tool.name}"
            try:
                specs.append(tool_spec(connection.name, tool, self._caller(connection.name, tool.name, timeout),
                                       timeout_s=timeout, taken=taken))
            except Exception as exc:  # noqa: BLE001 - one odd schema must not hide the server's other tools
                left_out[key] = f"server {connection.name!r}: tool {tool.name!r} left out ({type(exc).__name__}: {exc})"
        self._specs[connection.name] = ((connection.generation, connection.tools_version), specs)
        self._left_out[connection.name] = left_out
        self.config_errors.update(left_out)
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
        context = current_tool_context()  # the executor's, on this worker thread
        future = self.loop.submit(connection.call(tool, arguments, timeout, context))
        # When the executor abandons the call (its timeout, a Ctrl-C), the request's task is
        # cancelled: the SDK sends `notifications/cancelled` and the server stays usable.
        forget = context.on_cancel(future.cancel) if context is not None else None
        try:
            result = _result(future, budget, context)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise ToolError(f"MCP server '{server}' did not answer within {timeout:g}s") from None
        except concurrent.futures.CancelledError:
            raise ToolError(f"the call of '{tool}' on MCP server '{server}' was cancelled") from None
        finally:
            if forget is not None:
                forget()
        try:
            rich = render_rich(result, self.artifacts)
            text = connection.scrub(rich.text)
            return ToolResult(text, rich.images) if rich.images else text
        except ToolError as exc:
            raise ToolError(connection.scrub(str(exc))) from None

    # how the kernel answers servers ---------------------------------------------------
    def set_sampler(self, sampler: Sampler | None) -> None:
        """Who answers servers' sampling requests (None: each gets a one-line refusal)."""
        self.hooks.sampler = sampler

    def set_elicitor(self, elicitor: Elicitor | None) -> None:
        """Who answers servers' elicitation requests (None: each is declined at once)."""
        self.hooks.elicitor = elicitor

    def set_roots(self, paths: list[Path]) -> None:
        """The roots servers see (default: the working directory); running servers are told."""
        new = [Path(p) for p in paths]
        if new == self.hooks.roots:
            return
        self.hooks.roots = new
        running = [c for c in self.connections.values() if c.state == RUNNING]
        if running and self.loop.running:
            self._run(_roots_changed(running), STOP_TIMEOUT_S + 2.0)

    # resources and prompts ----------------------------------------------------------------
    def resources(self, config_file: str | Path, report: Report | None = print) -> list[ResourceInfo]:
        """Every running server's resources and templates (servers without resources skipped)."""
        return self._gather(config_file, report, "resources", "listing its resources", catalog.list_resources)

    def prompts(self, config_file: str | Path, report: Report | None = print) -> list[PromptInfo]:
        """Every running server's prompts (servers without prompts skipped)."""
        return self._gather(config_file, report, "prompts", "listing its prompts", catalog.list_prompts)

    def read_resource(self, server: str, uri: str) -> str | ToolResult:
        """A resource's contents as a tool's embedded resource reads; ``ToolError`` one-liners."""
        connection = self._capable(server, "resources")
        result = self._use(connection, f"reading {uri}", lambda client: client.read_resource(uri))
        return catalog.resource_text(server, uri, result, self.artifacts)

    def get_prompt(self, server: str, name: str, arguments: dict[str, str]) -> list[tuple[str, str]]:
        """The prompt's (role, text) messages; a missing required argument is named."""
        connection = self._capable(server, "prompts")
        known = {p.name: p for p in self._use(connection, "listing its prompts",
                                              lambda client: catalog.list_prompts(server, client))}
        if name not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise ToolError(f"MCP server '{server}' has no prompt '{name}' (its prompts: {listed})")
        missing = catalog.missing_arguments(known[name], arguments)
        if missing:
            raise ToolError(f"prompt '{server}:{name}' needs the argument{'s' if len(missing) > 1 else ''} "
                            f"{', '.join(missing)} (give name=value)")
        args = {k: str(v) for k, v in arguments.items()}
        result = self._use(connection, f"the prompt '{name}'", lambda client: client.get_prompt(name, args))
        return catalog.prompt_messages(result, self.artifacts)

    def _gather(self, config_file: str | Path, report: Report | None, capability: str, what: str,
                lister: Callable[[str, Any], Any]) -> list[Any]:
        self.tools(config_file, report)  # start what the file lists, as a turn does
        found: list[Any] = []
        for name, connection in list(self.connections.items()):
            if connection.state != RUNNING or not catalog.has_capability(connection._client, capability):
                continue
            try:
                found += self._use(connection, what, lambda client, name=name: lister(name, client))
            except ToolError as exc:
                if report is not None:
                    report(str(exc))
        return found

    def _capable(self, server: str, capability: str) -> ServerConnection:
        connection = self.connections.get(server)
        if connection is None or self._closed:
            known = ", ".join(sorted(self.connections)) or "none running"
            raise ToolError(f"no MCP server '{server}' (servers: {known})")
        if connection.state == RUNNING and not catalog.has_capability(connection._client, capability):
            raise ToolError(f"MCP server '{server}' offers no {capability}")
        return connection

    def _use(self, connection: ServerConnection, what: str, operation: Callable[[Any], Any]) -> Any:
        budget = REQUEST_TIMEOUT_S + connection.startup_timeout_s + 2 * STOP_TIMEOUT_S + 2.0
        try:
            return self.loop.run(connection.use(what, operation, REQUEST_TIMEOUT_S), budget)
        except LoopTimeout:
            raise ToolError(f"MCP server '{connection.name}' did not answer {what} in time") from None

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
        self._left_out.pop(name, None)
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
            for note in connection.notes:  # e.g. a server that refused roots and sampling
                if (name, note) not in self._reported:
                    self._reported.add((name, note))
                    lines.append(note)
            if connection.state == FAILED and connection.error and (name, connection.error) not in self._reported:
                self._reported.add((name, connection.error))
                lines.append(f"MCP server '{name}' failed to start: {connection.error}\n"
                             f"Its tools are left out; `%agent mcp restart {name}` tries again.")
        return lines


def _result(future: concurrent.futures.Future[Any], budget: float, context: ToolContext | None) -> Any:
    """``future.result(budget)``, plus the time the call spent waiting for the user."""
    start = time.monotonic()
    while True:
        elapsed = time.monotonic() - start
        left = budget - elapsed if context is None else context.left_s(budget, elapsed)
        if left is not None and left <= 0:
            raise concurrent.futures.TimeoutError
        try:
            return future.result(USER_WAIT_SLICE_S if left is None else left)
        except concurrent.futures.TimeoutError:
            continue  # look again: the user may have been asked meanwhile


async def _start_all(connections: list[ServerConnection]) -> None:
    await asyncio.gather(*(c.ensure_started() for c in connections), return_exceptions=True)


async def _refresh_all(connections: list[ServerConnection]) -> None:
    await asyncio.gather(*(c.refresh_tools(REQUEST_TIMEOUT_S) for c in connections), return_exceptions=True)


async def _roots_changed(connections: list[ServerConnection]) -> None:
    await asyncio.gather(*(c.roots_changed() for c in connections), return_exceptions=True)


async def _stop_all(connections: list[ServerConnection]) -> None:
    await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)


# the kernel's one manager -------------------------------------------------------------------
_KERNEL: MCPManager | None = None
_KERNEL_LOCK = threading.Lock()
_KERNEL_ADMIT: Callable[[str], str | None] | None = None  # the admin's policy, for every manager of the kernel


def set_kernel_admission(admit: Callable[[str], str | None] | None) -> None:
    """Which servers the kernel's managers may start (the policy's ``mcp_servers``; None: all)."""
    global _KERNEL_ADMIT
    with _KERNEL_LOCK:
        _KERNEL_ADMIT = admit
        if _KERNEL is not None:
            _KERNEL.admit = admit


def kernel_manager() -> MCPManager:
    """The manager of this process; its servers stop when the interpreter exits."""
    global _KERNEL
    with _KERNEL_LOCK:
        if _KERNEL is None or _KERNEL._closed:
            _KERNEL = MCPManager()
            _KERNEL.admit = _KERNEL_ADMIT
            atexit.register(_KERNEL.shutdown)
        return _KERNEL


def shutdown_kernel_manager() -> None:
    global _KERNEL
    with _KERNEL_LOCK:
        manager, _KERNEL = _KERNEL, None
    if manager is not None:
        manager.shutdown()
        atexit.unregister(manager.shutdown)
