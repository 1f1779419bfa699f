"""A tool call that waits for the user (a server's sampling request, approved on a card)
does not run out of time meanwhile: ``within`` (the MCP request's bound, on the loop) and
``_result`` (the worker thread's bound) add the time the call's ``ToolContext`` spent
waiting for the user. No server here: the bounds alone, with a request that answers once
the user has."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import pytest

from jupyter_brain.agent.tool_context import ToolContext
from jupyter_brain.mcp.connection import within
from jupyter_brain.mcp.manager import _result


def test_the_requests_bound_stands_still_while_the_user_is_asked():
    async def scenario() -> str:
        context = ToolContext("c")
        answered = asyncio.Event()

        async def request() -> str:
            await answered.wait()
            return "answered"

        async def user() -> None:
            with context.waiting_for_user():
                await asyncio.sleep(2.0)  # four times the request's bound
            answered.set()

        asking = asyncio.ensure_future(user())
        await asyncio.sleep(0)  # the user is being asked before the request is bounded
        result = await within(request(), 0.5, context)
        await asking
        return result

    assert asyncio.run(scenario()) == "answered"


def test_without_the_user_the_request_still_times_out_and_is_cancelled():
    async def scenario() -> bool:
        cancelled = asyncio.Event()

        async def request() -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise

        with pytest.raises(TimeoutError):
            await within(request(), 0.2, ToolContext("c"))
        return cancelled.is_set()

    assert asyncio.run(scenario())


def test_the_worker_threads_bound_adds_the_users_time_too():
    context = ToolContext("c")
    future: concurrent.futures.Future[str] = concurrent.futures.Future()
    asking = threading.Event()

    def user() -> None:
        with context.waiting_for_user():
            asking.set()
            threading.Event().wait(2.0)  # four times the bound (not time.sleep: see servers.pause)
        future.set_result("answered")

    threading.Thread(target=user, daemon=True).start()
    assert asking.wait(60)
    assert _result(future, 0.5, context) == "answered"
    with pytest.raises(concurrent.futures.TimeoutError):
        _result(concurrent.futures.Future(), 0.2, ToolContext("d"))
