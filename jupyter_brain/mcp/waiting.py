"""How a call on the MCP loop waits: bounded by its timeout plus the time the user was
asked (a sampling approval, an elicitation card), and known to a task it turns into."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from contextlib import suppress
from typing import Any

from ..agent.tool_context import ToolContext
from .task_extension import CURRENT_CALL

WAIT_SLICE_S = 0.25  # while the user is being asked, how often the call's bound is looked at again


async def as_call(request: Awaitable[Any], server: str, context: ToolContext | None) -> Any:
    """``request``, with the tool call it belongs to known to a task it turns into."""
    CURRENT_CALL.set((server, context))
    return await request


async def within(awaitable: Any, timeout_s: float, context: ToolContext | None) -> Any:
    """``asyncio.wait_for``, except that the time ``context`` spends waiting for the user (a
    sampling approval) is added to ``timeout_s``. Cancelled or timed out, the request is
    cancelled too (the SDK then sends ``notifications/cancelled``)."""
    if context is None:
        return await asyncio.wait_for(awaitable, timeout_s)
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(awaitable)
    start = loop.time()
    try:
        while True:
            left = context.left_s(timeout_s, loop.time() - start)
            if left is not None and left <= 0:
                raise TimeoutError
            await asyncio.wait({task}, timeout=WAIT_SLICE_S if left is None else left)
            if task.done():
                return task.result()
    finally:
        if not task.done():
            task.cancel()
            with suppress(asyncio.CancelledError, Exception):
                await task
