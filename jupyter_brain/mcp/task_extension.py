"""Tasks as the ``io.modelcontextprotocol/tasks`` extension of the 2026-07-28 revision.

The client declares the extension in each request's capabilities (the SDK's
``ClientExtension``); a server may then answer ``tools/call`` with a task handle
(``resultType: "task"``) instead of the result. The SDK hands that handle to this
module's resolver, which polls ``tasks/get`` at the task's ``pollIntervalMs``, shows each
new status message as the call's progress on its row, answers ``input_required`` tasks'
``inputRequests`` through the same sampling/elicitation/roots callbacks (``tasks/update``),
and returns the ``completed`` task's ``result`` as the tool's result. A call abandoned (its
timeout, Ctrl-C) sends ``tasks/cancel``. The 2025-11-25 in-core tasks are ``tasks.py``.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress
from contextvars import ContextVar
from typing import Any, Literal

from ..agent.tool_context import ToolContext
from ..agent.tools import ToolError
from .tasks import CANCEL_TIMEOUT_S, POLL_DEFAULT_S, POLL_MAX_S, POLL_MIN_S

log = logging.getLogger("jupyter_brain.mcp")
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TERMINAL = ("completed", "failed", "cancelled")
# the tool call a task belongs to (set by ServerConnection.call around the SDK's call_tool)
CURRENT_CALL: ContextVar[tuple[str, ToolContext | None] | None] = ContextVar("jupyter_brain_mcp_call", default=None)


def tasks_extension() -> Any:
    """The SDK ``ClientExtension`` that declares the tasks extension and resolves its handles."""
    import mcp_types as types
    from mcp.client.extension import ClientExtension, ResultClaim
    from pydantic import ConfigDict

    class CreatedTask(types.Result):
        """``CreateTaskResult``: a ``Task``, flat, tagged ``resultType: "task"``."""

        model_config = ConfigDict(extra="allow")
        result_type: Literal["task"] = "task"
        task_id: str
        status: str = "working"
        status_message: str | None = None
        poll_interval_ms: float | None = None

    class TasksExtension(ClientExtension):
        identifier = TASKS_EXTENSION

        def claims(self) -> Any:
            return [ResultClaim(result_type="task", model=CreatedTask, resolve=_resolve)]

    return TasksExtension()


async def _resolve(created: Any, claim: Any) -> Any:
    """The task's final ``CallToolResult``; bounded by the caller (``within``)."""
    import mcp_types as types

    call = CURRENT_CALL.get()
    server, context = call if call is not None else ("?", None)
    session, tool = claim.session, claim.tool_name
    timeout = claim.read_timeout_seconds
    task: dict[str, Any] = created.model_dump(by_alias=True, mode="json", exclude_none=True)
    task_id = str(task["taskId"])
    shown: list[str] = []
    answered: set[str] = set()
    try:
        while True:
            _show(task, shown, context)
            status = task.get("status")
            if status == "completed":
                return types.CallToolResult.model_validate(task.get("result") or {})
            if status == "failed":
                error = task.get("error") or {}
                raise ToolError(f"MCP server '{server}': the task of '{tool}' failed: "
                                f"{error.get('message') or task.get('statusMessage') or 'no reason given'}")
            if status == "cancelled":
                raise ToolError(f"MCP server '{server}' cancelled the task of '{tool}'"
                                + (f": {task['statusMessage']}" if task.get("statusMessage") else ""))
            if status == "input_required":
                await _answer(session, task_id, task.get("inputRequests") or {}, answered, timeout)
            await asyncio.sleep(_interval(task))
            task = await _send(session, "tasks/get", {"taskId": task_id}, timeout)
    finally:
        if task.get("status") not in TERMINAL:  # abandoned (a timeout, Ctrl-C): the server stops the work
            asyncio.get_running_loop().create_task(cancel(session, task_id, server))


async def _answer(session: Any, task_id: str, requests: dict[str, Any], answered: set[str],
                  timeout: float | None) -> None:
    """Answer the requests not answered yet (a poll repeats outstanding ones) with ``tasks/update``."""
    import mcp_types as types
    from mcp.client.session import ClientRequestContext
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(types.InputRequest)
    responses: dict[str, Any] = {}
    for key, raw in requests.items():
        if key in answered:
            continue
        answered.add(key)
        request = adapter.validate_python(raw)
        ctx = ClientRequestContext(session=session, request_id=key,
                                   meta=request.params.meta if request.params else None)
        response = await session.dispatch_input_request(ctx, request)
        if isinstance(response, types.ErrorData):  # a refusal (no sampler): the task cannot go on
            raise ToolError(f"the task asked for {request.method}, which was refused: {response.message}")
        responses[key] = response.model_dump(by_alias=True, mode="json", exclude_none=True)
    if responses:
        await _send(session, "tasks/update", {"taskId": task_id, "inputResponses": responses}, timeout)


async def _send(session: Any, method: str, params: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    """A tasks/* request, stamped as the SDK stamps its own (protocol version, capabilities),
    with ``Mcp-Name`` set to the task id as the extension requires on Streamable HTTP."""
    from mcp.shared.inbound import MCP_NAME_HEADER, encode_header_value

    data: dict[str, Any] = {"method": method, "params": dict(params)}
    opts: dict[str, Any] = {}
    if timeout is not None:
        opts["timeout"] = timeout
    session._stamp(data, opts)
    opts.setdefault("headers", {})[MCP_NAME_HEADER] = encode_header_value(str(params["taskId"]))
    return dict(await session._dispatcher.send_raw_request(method, data.get("params"), opts))


async def cancel(session: Any, task_id: str, server: str) -> None:
    with suppress(Exception):
        await asyncio.wait_for(_send(session, "tasks/cancel", {"taskId": task_id}, CANCEL_TIMEOUT_S),
                               CANCEL_TIMEOUT_S)
        log.info("MCP server '%s': task %s cancelled", server, task_id)


def _interval(task: dict[str, Any]) -> float:
    poll = task.get("pollIntervalMs")
    seconds = poll / 1000 if isinstance(poll, int | float) and poll > 0 else POLL_DEFAULT_S
    return min(POLL_MAX_S, max(POLL_MIN_S, seconds))


def _show(task: dict[str, Any], shown: list[str], context: ToolContext | None) -> None:
    message = task.get("statusMessage") or str(task.get("status"))
    if context is None or (shown and shown[-1] == message):
        return
    shown.append(message)
    context.progress(len(shown), None, message)
