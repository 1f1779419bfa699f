"""Running code in a notebook's own kernel: the server's session for that notebook.

The kernel is the one the user's tab uses (the server's session manager knows it by the
notebook's path); with none, a session is started with the notebook's kernelspec, as
JupyterLab would, so a tab opened later attaches to it. One execution at a time per kernel
(a kernel runs one anyway; a lock keeps two callers' messages apart). An execution ends at
its reply and idle status, at its timeout (the kernel is interrupted and the result says so),
or when the kernel dies (said so; the server's restarter brings it back for the next call).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import nbformat
from jupyter_core.utils import ensure_async

from .errors import ToolProblem

POLL_S = 0.25
DRAIN_AFTER_INTERRUPT_S = 5.0
RESTART_WAIT_S = 10.0  # the server's restarter notices a dead kernel within a few seconds
READY_TIMEOUT_S = 60.0


@dataclass
class Execution:
    status: str  # ok, error, timeout, died
    outputs: list[Any] = field(default_factory=list)
    execution_count: int | None = None
    seconds: float = 0.0

    @property
    def note(self) -> str:
        if self.status == "timeout":
            return f"[timed out after {self.seconds:.0f} s: the kernel was interrupted]"
        if self.status == "died":
            return ("[the kernel died during this execution; the server restarts it, and the next call runs in the "
                    "fresh kernel (its variables are gone)]")
        return ""


class NotebookKernels:
    """The session kernel of each notebook, and executions in it."""

    def __init__(self, serverapp: Any) -> None:
        self.kernels = serverapp.kernel_manager
        self.sessions = serverapp.session_manager
        self.specs = serverapp.kernel_spec_manager
        self._clients: dict[str, Any] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._start_lock = asyncio.Lock()

    async def running(self, api_path: str) -> str | None:
        """The id of ``api_path``'s session kernel, or None when it has none."""
        for session in await ensure_async(self.sessions.list_sessions()):
            if session.get("path") == api_path and session.get("kernel"):
                kernel_id = session["kernel"]["id"]
                if kernel_id in self.kernels:
                    return str(kernel_id)
        return None

    async def running_paths(self) -> set[str]:
        return {s.get("path") for s in await ensure_async(self.sessions.list_sessions()) if s.get("kernel")}

    async def kernel_for(self, api_path: str, kernelspec: str | None) -> str:
        """The id of ``api_path``'s session kernel, started if it has none."""
        async with self._start_lock:  # two first calls on one notebook start one kernel
            running = await self.running(api_path)
            if running is not None:
                return running
            name = kernelspec or self.kernels.default_kernel_name
            specs = (await ensure_async(self.specs.get_all_specs())) or {}
            if name not in specs:
                raise ToolProblem(f"The notebook asks for kernel {name!r}, which this server does not have "
                                  f"(it has: {', '.join(sorted(specs)) or 'none'})")
            model = await ensure_async(self.sessions.create_session(
                path=api_path, name=api_path.rsplit("/", 1)[-1], type="notebook", kernel_name=name))
            return str(model["kernel"]["id"])

    def lock(self, kernel_id: str) -> asyncio.Lock:
        return self._locks.setdefault(kernel_id, asyncio.Lock())

    async def execute(self, kernel_id: str, code: str, timeout: float, *, store_history: bool = True) -> Execution:
        async with self.lock(kernel_id):
            return await self._execute(kernel_id, code, timeout, store_history)

    async def _execute(self, kernel_id: str, code: str, timeout: float, store_history: bool) -> Execution:
        manager = self.kernels.get_kernel(kernel_id)
        await self._alive(kernel_id, manager)
        client = await self._client(kernel_id, manager)
        pid = _pid(manager)
        started = time.monotonic()
        msg_id = client.execute(code, store_history=store_history, allow_stdin=False, stop_on_error=False)
        result = Execution("ok")
        got_idle = got_reply = False
        while not (got_idle and got_reply):
            if time.monotonic() - started > timeout:
                result.status = "timeout"
                await ensure_async(self.kernels.interrupt_kernel(kernel_id))
                await self._drain(client, msg_id, result)
                break
            if not await ensure_async(manager.is_alive()) or _pid(manager) != pid:
                result.status = "died"
                self._forget(kernel_id)
                break
            if not got_idle:
                got_idle = await self._iopub(client, msg_id, result)
            if not got_reply:  # after the idle status, the reply is a moment away: wait for it, not for iopub
                reply = await _next(client.get_shell_msg, POLL_S if got_idle else 0)
                if reply is not None and reply["parent_header"].get("msg_id") == msg_id:
                    got_reply = True
                    result.execution_count = reply["content"].get("execution_count")
                    if reply["content"].get("status") == "error" and result.status == "ok":
                        result.status = "error"
        result.seconds = time.monotonic() - started
        return result

    async def _iopub(self, client: Any, msg_id: str, result: Execution) -> bool:
        """Read iopub for up to POLL_S; True once this execution's idle status came."""
        msg = await _next(client.get_iopub_msg, POLL_S)
        while msg is not None:
            if msg["parent_header"].get("msg_id") == msg_id:
                kind = msg["msg_type"]
                if kind == "status" and msg["content"].get("execution_state") == "idle":
                    return True
                if kind == "execute_input":
                    result.execution_count = msg["content"].get("execution_count")
                elif kind == "clear_output":
                    result.outputs.clear()
                elif kind in ("stream", "display_data", "execute_result", "error"):
                    output = nbformat.v4.output_from_msg(msg)
                    _append(result.outputs, output)
                    if kind == "error":
                        result.status = "error"
            msg = await _next(client.get_iopub_msg, 0)
        return False

    async def _drain(self, client: Any, msg_id: str, result: Execution) -> None:
        until = time.monotonic() + DRAIN_AFTER_INTERRUPT_S
        status = result.status
        while time.monotonic() < until:
            if await self._iopub(client, msg_id, result):
                break
        result.status = status  # the interrupt's KeyboardInterrupt is kept as an output

    async def _alive(self, kernel_id: str, manager: Any) -> None:
        """Wait for a kernel the server's restarter is bringing back; restart one left dead."""
        until = time.monotonic() + RESTART_WAIT_S
        while not await ensure_async(manager.is_alive()):
            self._forget(kernel_id)
            if time.monotonic() > until:
                await ensure_async(self.kernels.restart_kernel(kernel_id))
                return
            await asyncio.sleep(POLL_S)

    async def _client(self, kernel_id: str, manager: Any) -> Any:
        client = self._clients.get(kernel_id)
        if client is None:
            client = manager.client()
            client.start_channels()
            try:
                await ensure_async(client.wait_for_ready(timeout=READY_TIMEOUT_S))
            except RuntimeError as exc:
                client.stop_channels()
                raise ToolProblem(f"The notebook's kernel did not answer: {exc}") from None
            self._clients[kernel_id] = client
        return client

    def _forget(self, kernel_id: str) -> None:
        client = self._clients.pop(kernel_id, None)
        if client is not None:
            try:
                client.stop_channels()
            except Exception:  # noqa: BLE001 - a dead kernel's channels may already be gone
                pass

    def close(self) -> None:
        for kernel_id in list(self._clients):
            self._forget(kernel_id)


async def _next(get: Any, timeout: float) -> Any:
    try:
        return await ensure_async(get(timeout=timeout))
    except Exception:  # noqa: BLE001 - queue.Empty / TimeoutError: nothing arrived in time
        return None


def _append(outputs: list[Any], output: Any) -> None:
    """Stream text merged into the previous output of the same stream, as the notebook shows it."""
    if (output.get("output_type") == "stream" and outputs and outputs[-1].get("output_type") == "stream"
            and outputs[-1].get("name") == output.get("name")):
        outputs[-1]["text"] += output["text"]
    else:
        outputs.append(output)


def _pid(manager: Any) -> Any:
    provisioner = getattr(manager, "provisioner", None)
    return getattr(provisioner, "pid", None)
