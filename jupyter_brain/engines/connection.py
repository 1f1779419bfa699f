"""One ACP agent process per kernel and engine, spoken to through the ``agent-client-protocol``
SDK on a background event loop, so the cell's thread stays free for the view and approvals.

Why the SDK: its pydantic schema is the protocol's own (typed requests, validated
responses), and its connection handles JSON-RPC ids, notifications and the agent's
requests to us. We add what a notebook needs around it: a transport that treats a line that
is not JSON as the end of the conversation (a clear error instead of a skipped line), the
agent's stderr kept for the error message, and ending the process on Ctrl-C.

Everything the agent asks of the client arrives on ``inbox`` (a ``queue.Queue``) as
``Inbound`` items, which the turn handles on the cell's thread (``turn.py``); a request
carries a ``concurrent.futures.Future`` that the turn answers.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import os
import queue
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import acp
from acp import schema
from acp._transport import NdjsonTransport
from acp.task.sender import MessageSender
from acp.task.supervisor import TaskSupervisor

from .commands import EngineSpec, require_installed

STDERR_LINES = 20
STOP_WAIT_S = 3.0
logging.getLogger("acp").setLevel(logging.CRITICAL)  # its errors reach the turn as one line


class AgentCrashed(Exception):
    """The agent process ended, or spoke something that is not JSON-RPC (one line)."""


@dataclass
class Inbound:
    """What the agent sent: an ``update`` (``data`` is the update's JSON), a ``permission``
    request, or a ``write`` (``data``: path, content); requests carry ``reply``."""

    kind: str
    session_id: str
    data: dict[str, Any]
    reply: concurrent.futures.Future[Any] | None = None


class _StrictTransport(NdjsonTransport):
    """Newline-delimited JSON; a line that is not JSON ends the conversation."""

    bad_line: str = ""

    async def receive(self) -> dict[str, Any] | None:
        line = (await self._read_line()).strip()
        while line == b"" and not self._reader.at_eof():
            line = (await self._read_line()).strip()
        if not line:
            return None
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            self.bad_line = line.decode("utf-8", "replace")[:200]
            return None
        return message


@dataclass
class Workspace:
    """The folder the agent may read and write through the client (``fs/*``)."""

    root: Path
    reads: list[str] = field(default_factory=list)

    def inside(self, path: str) -> Path:
        target = Path(path)
        target = (self.root / target if not target.is_absolute() else target).resolve()
        if target != self.root and self.root not in target.parents:
            raise acp.RequestError.invalid_params({"path": path, "reason": f"outside the workspace {self.root}"})
        return target


class _Client:
    """The client side the SDK calls: every request becomes an ``Inbound`` for the turn."""

    def __init__(self, inbox: queue.Queue[Inbound], workspace: Workspace) -> None:
        self.inbox = inbox
        self.workspace = workspace
        self.quiet = False  # session/load replays the history as updates: not this turn's

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if not self.quiet:
            data = update.model_dump(mode="json", by_alias=True, exclude_none=True)
            self.inbox.put(Inbound("update", session_id, data))

    async def request_permission(self, options: list[schema.PermissionOption], session_id: str,
                                 tool_call: schema.ToolCallUpdate, **kwargs: Any) -> acp.RequestPermissionResponse:
        data = {"toolCall": tool_call.model_dump(mode="json", by_alias=True, exclude_none=True),
                "options": [o.model_dump(mode="json", by_alias=True, exclude_none=True) for o in options]}
        chosen = await self._ask("permission", session_id, data)
        if chosen is None:
            return acp.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return acp.RequestPermissionResponse(outcome=schema.AllowedOutcome(outcome="selected", option_id=chosen))

    async def read_text_file(self, path: str, session_id: str, line: int | None = None,
                             limit: int | None = None, **kwargs: Any) -> acp.ReadTextFileResponse:
        target = self.workspace.inside(path)
        try:
            text = target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise acp.RequestError.resource_not_found(path) if isinstance(exc, FileNotFoundError) else \
                acp.RequestError.internal_error({"path": path, "reason": str(exc)}) from None
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start:start + limit] if limit is not None else lines[start:])
        self.workspace.reads.append(str(target))
        return acp.ReadTextFileResponse(content=text)

    async def write_text_file(self, content: str, path: str, session_id: str, **kwargs: Any) -> None:
        target = self.workspace.inside(path)
        error = await self._ask("write", session_id, {"path": str(target), "content": content})
        if error:
            raise acp.RequestError.invalid_request({"path": path, "reason": error})

    async def _ask(self, kind: str, session_id: str, data: dict[str, Any]) -> Any:
        reply: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.inbox.put(Inbound(kind, session_id, data, reply))
        return await asyncio.wrap_future(reply)

    def on_connect(self, conn: Any) -> None:
        pass


class AgentProcess:
    """A running ACP agent: started on first use, its sessions kept while it lives."""

    def __init__(self, spec: EngineSpec, workspace: Path, env: dict[str, str] | None = None) -> None:
        self.spec = spec
        self.inbox: queue.Queue[Inbound] = queue.Queue()
        self.workspace = Workspace(workspace.resolve())
        self.env = env
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.info: schema.InitializeResponse | None = None
        self._client = _Client(self.inbox, self.workspace)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"acp-{spec.name}", daemon=True)
        self._thread.start()
        self._process: asyncio.subprocess.Process | None = None
        self._transport: _StrictTransport | None = None
        self._conn: acp.ClientSideConnection | None = None
        self._tasks: TaskSupervisor | None = None

    # -- the loop ------------------------------------------------------------------
    def call(self, coro: Any, timeout: float | None = None) -> Any:
        """Run a coroutine on the agent's loop and wait for it here."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def submit(self, coro: Any) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.returncode is None and self._conn is not None

    def start(self, timeout: float = 60.0) -> schema.InitializeResponse:
        program = require_installed(self.spec)
        return self.call(self._start(program), timeout)

    async def _start(self, program: str) -> schema.InitializeResponse:
        env = {**os.environ, **(self.env or {})}
        self._process = await asyncio.create_subprocess_exec(
            program, *self.spec.command[1:], stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env, cwd=str(self.workspace.root), limit=16 * 1024 * 1024)
        assert self._process.stdout is not None and self._process.stdin is not None
        self._tasks = TaskSupervisor(source="jupyter_brain.engines")
        self._transport = _StrictTransport(self._process.stdout, MessageSender(self._process.stdin, self._tasks))
        self._conn = acp.connect_to_agent(cast(Any, self._client), self._transport)
        asyncio.ensure_future(self._read_stderr())
        capabilities = schema.ClientCapabilities(
            fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=False)
        self.info = await self._guard(self._conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION, client_capabilities=capabilities,
            client_info=schema.Implementation(name="jupyter-brain", version="0.1.0")))
        await self._authenticate(env)
        return self.info

    async def _authenticate(self, env: dict[str, str]) -> None:
        """An agent that offers a key from the environment as a way in (codex-acp: ``OPENAI_API_KEY``)
        and whose variables are set is authenticated with it; others (claude-code-acp) read it themselves."""
        assert self._conn is not None and self.info is not None
        for method in self.info.auth_methods or []:
            data = method.model_dump(mode="json", by_alias=True, exclude_none=True)
            names = [str(v.get("name")) for v in data.get("vars") or [] if isinstance(v, dict)]
            if data.get("type") == "env_var" and names and all(env.get(n) for n in names):
                await self._guard(self._conn.authenticate(method_id=str(data["id"])))
                return

    async def _read_stderr(self) -> None:
        stream = self._process.stderr if self._process is not None else None
        while stream is not None:
            line = await stream.readline()
            if not line:
                return
            self.stderr.append(line.decode("utf-8", "replace").rstrip())

    async def _guard(self, request: Any) -> Any:
        """A request to the agent; its death or a bad line becomes ``AgentCrashed``."""
        try:
            return await request
        except (ConnectionError, BrokenPipeError) as exc:
            raise AgentCrashed(self.crash_message()) from exc
        except acp.RequestError as exc:
            raise AgentCrashed(f"the agent ({self.spec.name}) answered with an error: {exc}") from exc

    def crash_message(self) -> str:
        bad = self._transport.bad_line if self._transport is not None else ""
        if bad:
            return f"the agent ({self.spec.name}) wrote a line that is not JSON-RPC: {bad!r}"
        code = self._process.returncode if self._process is not None else None
        tail = next((line for line in reversed(self.stderr) if line.strip()), "")
        ended = f"exited with code {code}" if code is not None else "closed the connection"
        return f"the agent ({self.spec.name}) {ended}" + (f": {tail[:300]}" if tail else "")

    # -- sessions and prompts ----------------------------------------------------------
    def can_load(self) -> bool:
        return bool(self.info is not None and self.info.agent_capabilities
                    and self.info.agent_capabilities.load_session)

    def new_session(self, mcp_servers: list[Any], timeout: float = 60.0) -> str:
        assert self._conn is not None
        response = self.call(self._guard(self._conn.new_session(
            cwd=str(self.workspace.root), mcp_servers=mcp_servers)), timeout)
        return str(response.session_id)

    def load_session(self, session_id: str, mcp_servers: list[Any], timeout: float = 60.0) -> None:
        """Continue a session this agent keeps (its history is replayed to us, not shown)."""
        assert self._conn is not None
        self._client.quiet = True
        try:
            self.call(self._guard(self._conn.load_session(
                cwd=str(self.workspace.root), session_id=session_id, mcp_servers=mcp_servers)), timeout)
        finally:
            self._client.quiet = False

    def can_fork(self) -> bool:
        caps = self.info.agent_capabilities if self.info is not None else None
        sessions = caps.session_capabilities if caps is not None else None
        return bool(sessions is not None and sessions.fork is not None)

    def fork_session(self, session_id: str, mcp_servers: list[Any], timeout: float = 60.0) -> str:
        """A copy of the session as it is now (``session/fork``): the state a re-run starts from."""
        assert self._conn is not None
        response = self.call(self._guard(self._conn.fork_session(
            session_id=session_id, cwd=str(self.workspace.root), mcp_servers=mcp_servers)), timeout)
        return str(response.session_id)

    def prompt(self, session_id: str, text: str) -> concurrent.futures.Future[Any]:
        assert self._conn is not None
        return self.submit(self._guard(self._conn.prompt(session_id=session_id, prompt=[acp.text_block(text)])))

    def cancel(self, session_id: str) -> None:
        """``session/cancel``: the agent should stop and answer the prompt with ``cancelled``."""
        if self._conn is not None and self.alive:
            with contextlib.suppress(Exception):
                self.call(self._conn.cancel(session_id=session_id), 2.0)

    def stop(self, wait_s: float = STOP_WAIT_S) -> None:
        """End the process (terminate, then kill) and forget its connection."""
        with contextlib.suppress(Exception):
            self.call(self._stop(wait_s), wait_s * 2 + 2)

    async def _stop(self, wait_s: float) -> None:
        process, conn = self._process, self._conn
        self._conn = None
        if conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), wait_s)
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                await asyncio.wait_for(process.wait(), wait_s)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()

    def close(self) -> None:
        self.stop()
        self._loop.call_soon_threadsafe(self._loop.stop)


ProcessFactory = Callable[[EngineSpec, Path], AgentProcess]
