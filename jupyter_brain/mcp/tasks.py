"""A tool that runs only as an MCP task (``execution.taskSupport: "required"``, the
2025-11-25 tasks of server-everything's ``simulate-research-query``): call now, fetch later.

``tools/call`` with a ``task`` field answers at once with the task; ``tasks/get`` is polled
(at the server's ``pollInterval``) and each new status message shows as the call's progress
on its row; once the task needs input (``input_required``: the server's elicitation, queued
for the client, arrives during ``tasks/result``) or is finished, ``tasks/result`` returns the
tool's result. A call abandoned (its timeout, Ctrl-C) sends ``tasks/cancel``, so the server
stops working on it. The SDK has the types but no client driver; this is that driver.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress
from typing import Any

from ..agent.tool_context import ToolContext
from ..agent.tools import ToolError

log = logging.getLogger("jupyter_brain.mcp")
TASK_TTL_MS = 10 * 60 * 1000  # asked for: how long the server keeps the task (it may keep it less)
POLL_MIN_S, POLL_MAX_S, POLL_DEFAULT_S = 0.2, 5.0, 1.0
CANCEL_TIMEOUT_S = 5.0
WAITING = ("working",)  # polled; input_required and the end states go to tasks/result


def runs_only_as_task(tool: Any) -> bool:
    """The tool says it must be called as a task (2025-11-25 ``execution.taskSupport``)."""
    return getattr(getattr(tool, "execution", None), "task_support", None) == "required"


async def call_as_task(client: Any, tool: str, arguments: dict[str, Any], read_timeout_s: float,
                       context: ToolContext | None, server: str) -> Any:
    """The tool's ``CallToolResult``, by way of a task; bounded by the caller (``within``)."""
    import mcp_types as types

    session = client.session
    request = types.CallToolRequest(params=types.CallToolRequestParams(
        name=tool, arguments=arguments, task=types.TaskMetadata(ttl=TASK_TTL_MS)))
    task = types.CreateTaskResult.model_validate(await _raw(session, request, read_timeout_s)).task
    shown: list[str] = []
    try:
        _show(task, shown, context)
        while task.status in WAITING:
            await asyncio.sleep(_interval(task))
            task = await session.send_request(
                types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task.task_id)),
                types.GetTaskResult, request_read_timeout_seconds=read_timeout_s)
            _show(task, shown, context)
        if task.status == "cancelled":
            raise ToolError(f"MCP server '{server}' cancelled the task of '{tool}'"
                            + (f": {task.status_message}" if task.status_message else ""))
        result = await session.send_request(
            types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task.task_id)),
            types.CallToolResult, request_read_timeout_seconds=read_timeout_s)
        task = None  # finished: nothing to cancel
        return result
    finally:
        if task is not None and task.status not in ("completed", "failed", "cancelled"):
            # abandoned (a timeout, Ctrl-C) or failed on our side: the server stops the work
            asyncio.get_running_loop().create_task(_cancel(session, task.task_id, server))


async def _raw(session: Any, request: Any, read_timeout_s: float) -> dict[str, Any]:
    """Send ``request`` and return the raw result: the SDK checks a ``tools/call`` answer
    against ``CallToolResult``, and a task-augmented call answers with the task instead."""
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    opts: dict[str, Any] = {"timeout": read_timeout_s}
    stamp = getattr(session, "_stamp", None)  # the SDK's per-request stamping (protocol headers, _meta)
    if callable(stamp):
        stamp(data, opts)
    raw = await session._dispatcher.send_raw_request(data["method"], data.get("params"), opts)
    return dict(raw)


def _interval(task: Any) -> float:
    poll = getattr(task, "poll_interval", None)
    seconds = poll / 1000 if isinstance(poll, int | float) and poll > 0 else POLL_DEFAULT_S
    return min(POLL_MAX_S, max(POLL_MIN_S, seconds))


def _show(task: Any, shown: list[str], context: ToolContext | None) -> None:
    """A new status message as the call's progress (the row shows the latest)."""
    message = task.status_message or task.status
    if context is None or (shown and shown[-1] == message):
        return
    shown.append(message)
    context.progress(len(shown), None, message)


async def _cancel(session: Any, task_id: str, server: str) -> None:
    import mcp_types as types

    with suppress(Exception):
        await asyncio.wait_for(session.send_request(
            types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id)),
            types.CancelTaskResult), CANCEL_TIMEOUT_S)
        log.info("MCP server '%s': task %s cancelled", server, task_id)
