"""One MCP server as seen from the kernel: start, list tools, call, notice a crash, stop.

All of it runs on the background loop. The SDK's ``Client`` is entered and left by one
long-lived *holder* task (anyio requires the same task for both), and calls run in their
own tasks beside it. Every wait is bounded: the start, each call, the stop.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import warnings
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack, suppress
from typing import Any, BinaryIO

from ..agent.tool_context import ToolContext
from ..agent.tools import ToolError
from .catalog import paged
from .client_hooks import ClientHooks, InFlight, callbacks
from .config import ConfigError, ServerConfig
from .negotiation import modern, names_deprecated, open_client, refusal_note, server_refused
from .tasks import call_as_task, runs_only_as_task
from .waiting import as_call, within

log = logging.getLogger("jupyter_brain.mcp")
STARTUP_TIMEOUT_S = 60.0  # a first `npx` or `uvx` start downloads the server; a busy machine starts slowly
STOP_TIMEOUT_S = 8.0  # the SDK's stdio shutdown: close stdin, 2 s, SIGTERM, 2 s, SIGKILL
STDERR_TAIL_CHARS = 1500
LOG_LEVEL = "info"  # the server's log lines we ask for (debug lines are noise in the event log)
USER_WAIT_MAX_S = 3600.0  # the SDK's backstop for a call that waits for the user (sampling approval)

NOT_STARTED, STARTING, RUNNING, FAILED, CRASHED, STOPPED = (
    "not started", "starting", "running", "failed", "crashed", "stopped")


class ServerConnection:
    """A server's state (one of the constants above), its tools, and its last error."""

    def __init__(self, config: ServerConfig, *, startup_timeout_s: float | None = None,
                 hooks: ClientHooks | None = None) -> None:
        self.config = config
        self.hooks = hooks or ClientHooks()  # sampling and roots: the manager's, shared
        self.in_flight = InFlight()  # the ToolContexts of calls running now
        self.startup_timeout_s = config.startup_timeout_s or startup_timeout_s or STARTUP_TIMEOUT_S
        self.state = NOT_STARTED
        self.error: str | None = None
        self.tools: list[Any] = []  # mcp_types.Tool
        self.instructions: str | None = None
        self.generation = 0  # bumped at each successful start
        self.tools_version = 0  # bumped when the server's tool list changed and was read again
        self.tools_stale = False  # the server said its tool list changed (read on the next turn)
        self._client: Any = None
        self._holder: asyncio.Task[None] | None = None
        self._stop_event: asyncio.Event | None = None
        self._scope: Any = None  # the holder's anyio CancelScope
        self._stderr: BinaryIO | None = None
        self._secrets: list[str] = []
        self._lock: asyncio.Lock | None = None
        self.protocol: str | None = None  # the revision negotiated at the last start
        self.offer_deprecated = True  # roots and sampling, to a handshake-era server (negotiation.py)
        self.notes: list[str] = []  # how the connection differs from the plain one (a refused capability)
        self._refused = False  # the last start failed on an error the server answered

    @property
    def name(self) -> str:
        return self.config.name

    def _guard(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    # lifecycle ---------------------------------------------------------------
    async def ensure_started(self) -> bool:
        """Start unless running; True when it runs afterwards."""
        async with self._guard():
            if self.state != RUNNING or self._client is None:
                await self._start()
            return self.state == RUNNING

    async def restart(self) -> bool:
        async with self._guard():
            await self._teardown()
            await self._start()
            return self.state == RUNNING

    async def stop(self) -> None:
        async with self._guard():
            await self._teardown()
            if self.state in (RUNNING, STARTING, CRASHED):
                self.state = STOPPED

    async def _start(self) -> None:
        await self._attempt()
        if self.state == FAILED and self._refused and self.offer_deprecated:
            refused = self.error or ""  # perhaps it refuses roots or sampling: once more without
            self.offer_deprecated = False
            await self._attempt()
            if self.state == RUNNING:
                self._note(refusal_note(self.name, refused.splitlines()[0]))
            else:
                self.offer_deprecated = True

    def _note(self, line: str) -> None:
        if line not in self.notes:
            self.notes.append(line)
            log.info("%s", line)

    async def _attempt(self) -> None:
        await self._teardown()
        self.state, self.error, self._refused = STARTING, None, False
        try:
            transport = self._transport()
        except (ConfigError, OSError, ValueError) as exc:
            self.state, self.error = FAILED, str(exc)
            return
        except ImportError as exc:
            self.state, self.error = FAILED, f"the MCP SDK is missing ({exc}); pip install 'mcp>=2,<3'"
            return
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[tuple[list[Any], str | None]] = loop.create_future()
        ready.add_done_callback(_retrieved)  # nobody awaits it once this start is abandoned
        self._stop_event = asyncio.Event()
        self._holder = loop.create_task(self._hold(transport, ready), name=f"mcp:{self.name}")
        try:
            tools, instructions = await asyncio.wait_for(asyncio.shield(ready), self.startup_timeout_s)
        except TimeoutError:
            ready.cancel()
            error = f"it did not complete the MCP handshake within {self.startup_timeout_s:g}s"
        except Exception as exc:  # noqa: BLE001 - any failure to start is reported, never raised
            error = str(exc)
        else:
            self.tools, self.instructions = tools, instructions
            self.state, self.generation = RUNNING, self.generation + 1
            return
        tail = self.stderr_tail()  # before the teardown closes the file
        await self._teardown()
        self.state, self.error = FAILED, self.scrub(error.rstrip(".") + "." + _stderr_note(tail))

    def _transport(self) -> Any:
        """What ``Client`` connects to: stdio parameters, or a streamable HTTP transport."""
        from mcp import StdioServerParameters

        config = self.config
        if config.transport == "stdio":
            env, env_secrets = config.resolved_env()
            args, arg_secrets = config.resolved_args()
            self._secrets = env_secrets + arg_secrets
            return StdioServerParameters(command=config.command, args=args, env=env or None, cwd=config.cwd)
        url, url_secrets = config.resolved_url()
        headers, header_secrets = config.resolved_headers()
        self._secrets = url_secrets + header_secrets
        return ("http", url, headers)

    async def _hold(self, transport: Any, ready: asyncio.Future[tuple[list[Any], str | None]]) -> None:
        """Open the client, list the tools, then keep the connection until told to stop.

        Stopped by the stop event (a clean exit) or, mid-handshake, by cancelling its anyio
        scope: the SDK's stdio shutdown is shielded from that, so the process still ends.
        """
        import anyio
        from mcp import StdioServerParameters, stdio_client
        from mcp_types import Implementation

        stop_event = self._stop_event
        assert stop_event is not None
        try:
            with anyio.CancelScope() as self._scope:
                async with AsyncExitStack() as stack:
                    if isinstance(transport, StdioServerParameters):
                        self._stderr = tempfile.TemporaryFile()
                        target: Any = stdio_client(transport, errlog=self._stderr)  # type: ignore[arg-type]
                    else:
                        target = await self._http_transport(stack, transport[1], transport[2])
                    client = await stack.enter_async_context(open_client(
                        target, offer_deprecated=self.offer_deprecated,
                        read_timeout_seconds=self.startup_timeout_s, log_level=LOG_LEVEL,
                        client_info=Implementation(name="jupyter-brain", version=_version()),
                        message_handler=self._notified, **callbacks(self.name, self.hooks, self.in_flight)))
                    self.protocol = client.protocol_version
                    tools = await _list_tools(client)
                    await _ask_for_logs(client)
                    self._client = client
                    ready.set_result((tools, client.instructions))
                    async with anyio.create_task_group() as group:
                        group.start_soon(self._listen_for_changes, client)
                        await stop_event.wait()
                        group.cancel_scope.cancel()
            if not ready.done():
                ready.set_exception(RuntimeError("the start was cancelled"))
        except BaseException as exc:  # noqa: BLE001 - the holder ends quietly; callers see the state
            if not ready.done():
                self._refused = server_refused(exc)
                ready.set_exception(RuntimeError(describe(exc)))
            elif not stop_event.is_set():
                self.state, self.error = CRASHED, self.scrub(describe(exc))
        finally:
            self._client = None
            self._scope = None

    async def _listen_for_changes(self, client: Any) -> None:
        """On a 2026-07-28 connection a changed tool list comes only to a ``subscriptions/listen``
        stream; older servers send ``notifications/tools/list_changed`` (``_notified``)."""
        from mcp.client.subscriptions import ListenNotSupportedError, ToolsListChanged

        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for event in subscription:
                    if isinstance(event, ToolsListChanged):
                        self.tools_stale = True
        except ListenNotSupportedError:
            return
        except Exception as exc:  # noqa: BLE001 - refused or lost: the list is read again at a restart
            log.info("MCP server '%s': no tool-list updates (%s)", self.name, describe(exc))

    async def _http_transport(self, stack: AsyncExitStack, url: str, headers: dict[str, str]) -> Any:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=headers or None, timeout=httpx2.Timeout(30.0, read=300.0)))
        return streamable_http_client(url, http_client=http)

    async def _teardown(self) -> None:
        """Stop the holder (which closes the client: the SDK ends a stdio server's whole
        process group) and wait for it, within bounds."""
        holder, self._holder = self._holder, None
        if holder is not None and not holder.done():
            if self._client is not None and self._stop_event is not None:  # connected: a clean exit
                self._stop_event.set()
                await asyncio.wait({holder}, timeout=STOP_TIMEOUT_S)
            if not holder.done() and self._scope is not None:  # mid-handshake, or stuck
                self._scope.cancel()
                await asyncio.wait({holder}, timeout=STOP_TIMEOUT_S)
            if not holder.done():
                holder.cancel()  # last resort; the SDK could then leave the process behind
        self._client = None
        if self._stderr is not None:
            with suppress(OSError):
                self._stderr.close()
            self._stderr = None

    # calls ---------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict[str, Any], timeout_s: float,
                   context: ToolContext | None = None) -> Any:
        """``tools/call`` bounded by ``timeout_s``; a crashed server is restarted first.
        Failures become ``ToolError``s the model can read. The server's progress, log lines
        and sampling requests during the call reach ``context``."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import REQUEST_TIMEOUT

        restarted = False
        if self._client is not None and _closed(self._client):  # it died while idle: nothing was sent
            async with self._guard():
                await self._teardown()
                self.state = CRASHED
        if self.state != RUNNING or self._client is None:
            if not await self.ensure_started():
                raise ToolError(f"MCP server '{self.name}' could not be restarted: {self.error}")
            restarted = True
        client, generation, mark = self._client, self.generation, self._stderr_size()
        progress = None
        if context is not None:
            self.in_flight.add(context)

            async def progress(done: float, total: float | None, message: str | None) -> None:
                context.progress(done, total, message)
        try:
            # With a tool context the SDK's own read timeout is only a backstop: the bound is
            # `within`'s, which adds the time the call waited for the user.
            read_timeout = timeout_s if context is None else timeout_s + USER_WAIT_MAX_S
            if self.runs_as_task(tool) and not modern(client):  # 2025-11-25 tasks: call now, fetch later
                request = call_as_task(client, tool, arguments, read_timeout, context, self.name)
            else:  # a 2026-07-28 task handle is resolved by the tasks extension (task_extension.py)
                request = as_call(client.call_tool(tool, arguments, read_timeout_seconds=read_timeout,
                                                   progress_callback=progress), self.name, context)
            return await within(request, timeout_s + 1.0, context)
        except TimeoutError:
            raise ToolError(f"MCP server '{self.name}' did not answer within {timeout_s:g}s") from None
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise ToolError(f"MCP server '{self.name}' did not answer within {timeout_s:g}s") from None
            if _connection_lost(exc):
                raise ToolError(await self._lost(restarted, generation, mark)) from None
            if self.offer_deprecated and names_deprecated(exc.message) and not modern(client):
                return await self._without_deprecated(tool, arguments, timeout_s, context, exc.message)
            raise ToolError(f"MCP server '{self.name}' refused the call: {self.scrub(exc.message)}") from None
        except (asyncio.CancelledError, ToolError):  # a ToolError: a task that failed or was cancelled
            raise
        except Exception as exc:  # noqa: BLE001 - a broken transport: report, restart next time
            if "output schema" in str(exc) and not _closed(client):  # the SDK checked the result: not a crash
                raise ToolError(f"MCP server '{self.name}' returned an invalid result: {self.scrub(str(exc))}") from None
            raise ToolError(await self._lost(restarted, generation, mark, describe(exc))) from None
        finally:
            if context is not None:
                self.in_flight.remove(context)

    async def _without_deprecated(self, tool: str, arguments: dict[str, Any], timeout_s: float,
                                  context: ToolContext | None, refused: str) -> Any:
        """The server refused a call over roots or sampling: connect again without them, call again."""
        self.offer_deprecated = False
        if not await self.restart():
            raise ToolError(f"MCP server '{self.name}' refused the call: {self.scrub(refused)}")
        self._note(refusal_note(self.name, self.scrub(refused)))
        return await self.call(tool, arguments, timeout_s, context)

    def runs_as_task(self, tool: str) -> bool:
        return any(t.name == tool and runs_only_as_task(t) for t in self.tools)

    async def use(self, what: str, operation: Callable[[Any], Awaitable[Any]], timeout_s: float) -> Any:
        """``operation(client)`` (a listing, a read, a prompt) on the running server, bounded;
        started first if need be. Failures are one-line ``ToolError``s."""
        from mcp.shared.exceptions import MCPError

        if self.state != RUNNING or self._client is None or _closed(self._client):
            if not await self.ensure_started():
                raise ToolError(f"MCP server '{self.name}' is not running: {self.error}")
        try:
            return await asyncio.wait_for(operation(self._client), timeout_s)
        except TimeoutError:
            raise ToolError(f"MCP server '{self.name}' did not answer {what} within {timeout_s:g}s") from None
        except MCPError as exc:
            raise ToolError(f"MCP server '{self.name}' refused {what}: {self.scrub(exc.message)}") from None
        except ToolError:
            raise
        except Exception as exc:  # noqa: BLE001 - e.g. a reply the SDK could not validate
            raise ToolError(f"MCP server '{self.name}' failed {what}: {self.scrub(describe(exc))}") from None

    async def _notified(self, message: Any) -> None:
        """Server notifications besides progress and log lines: a changed tool list is read
        again on the next turn (resources and prompts are listed fresh each time)."""
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.tools_stale = True

    async def refresh_tools(self, timeout_s: float) -> None:
        """Read a stale tool list again (a failure keeps the old one, stale, for the next turn)."""
        tools = await self.use("listing its tools", _list_tools, timeout_s)
        self.tools, self.tools_stale = tools, False
        self.tools_version += 1

    async def roots_changed(self) -> None:
        """Tell a running server that the roots changed (it asks for them again)."""
        client = self._client
        if self.state == RUNNING and client is not None and not _closed(client):
            with suppress(Exception), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await asyncio.wait_for(client.send_roots_list_changed(), STOP_TIMEOUT_S)

    async def _lost(self, restarted: bool, generation: int, mark: int, detail: str = "") -> str:
        tail = self.stderr_tail(since=mark)  # what the server wrote during this call
        async with self._guard():
            if self.generation != generation:  # another call restarted it meanwhile
                return f"MCP server '{self.name}' stopped during the call; it has been restarted since."
            await self._teardown()
            self.state = CRASHED
            self.error = self.scrub("the connection closed during a call" + (f" ({detail})" if detail else "")
                                    + "." + _stderr_note(tail))
        again = "" if restarted else " It will be restarted on the next call."
        return self.scrub(f"MCP server '{self.name}' stopped during the call (it crashed or closed the "
                          f"connection).{again}{_stderr_note(tail)}")

    # reporting -----------------------------------------------------------------
    def _stderr_size(self) -> int:
        try:
            return self._stderr.seek(0, 2) if self._stderr is not None else 0
        except (OSError, ValueError):
            return 0

    def stderr_tail(self, since: int = 0) -> str:
        """The last lines a stdio server wrote to stderr (after byte ``since``)."""
        if self._stderr is None:
            return ""
        try:
            size = self._stderr.seek(0, 2)
            self._stderr.seek(max(since, size - 4 * STDERR_TAIL_CHARS))
            text = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [line.rstrip() for line in text.splitlines() if line.strip()]
        tail = "\n".join(lines[-12:])
        return self.scrub(tail[-STDERR_TAIL_CHARS:])

    def scrub(self, text: str) -> str:
        """No resolved env or header value in anything we show or store."""
        for secret in sorted(set(self._secrets), key=len, reverse=True):
            if len(secret) >= 4:
                text = text.replace(secret, "***")
        return text


def _stderr_note(tail: str) -> str:
    if not tail:
        return ""
    return "\nIts last stderr lines:\n" + "\n".join(f"  {line}" for line in tail.splitlines())


async def _list_tools(client: Any) -> list[Any]:
    return await paged(lambda cursor: client.list_tools(cursor=cursor), "tools")


async def _ask_for_logs(client: Any) -> None:
    """Servers of the handshake era send log lines at the level set by ``logging/setLevel``
    (newer ones read the level from each request); a refusal is no reason to fail the start."""
    if getattr(client.server_capabilities, "logging", None) is None:
        return
    with suppress(Exception), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        await client.set_logging_level(LOG_LEVEL)


def _closed(client: Any) -> bool:
    """Whether the client's connection has already closed (the SDK's dispatcher saw EOF)."""
    try:
        return bool(getattr(getattr(client.session, "_dispatcher", None), "_closed", False))
    except RuntimeError:  # no session any more
        return True


def _connection_lost(exc: Any) -> bool:
    from mcp_types import CONNECTION_CLOSED

    return getattr(exc, "code", None) == CONNECTION_CLOSED


def describe(exc: BaseException) -> str:
    """The first real error inside (anyio wraps transport failures in exception groups)."""
    seen = 0
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions and seen < 10:
        real = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (real or list(exc.exceptions))[0]
        seen += 1
    if isinstance(exc, asyncio.CancelledError):
        return "the connection was cancelled"
    text = str(exc).strip()
    if getattr(exc, "code", None) is not None and text == "Connection closed":
        return "the server closed the connection (it exited or crashed)"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _version() -> str:
    from ..foundation.version import __version__

    return __version__


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Mark a finished future's exception as seen. A start that was abandoned (stopped,
    or cancelled by a shutdown) no longer awaits ``ready``, and the holder still sets its
    outcome; asyncio would then log "Future exception was never retrieved" with a
    traceback when the future is collected, into the kernel's stderr."""
    if not future.cancelled():
        future.exception()
