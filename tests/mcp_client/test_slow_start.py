"""A server whose start outlasts the manager's bound is said, never silently left out."""

from __future__ import annotations

import sys

import pytest

from .servers import write_config

pytestmark = pytest.mark.mcp_server

# A server that never answers the handshake, with a start bound far beyond the manager's.
MUTE = {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"], "startup_timeout_s": 600}


def test_a_start_that_outlasts_the_bound_is_reported_and_retried_next_turn(manager, tmp_path, monkeypatch):
    path = write_config(tmp_path, {"mute": MUTE})
    monkeypatch.setattr(manager, "_start_budget", lambda pending: 3.0)  # the start itself would wait 600 s
    reports: list[str] = []
    tools = manager.tools(path, report=reports.append)
    assert tools == []
    assert reports == [
        "MCP server 'mute' did not start within 3s; its tools are left out of this turn and the next turn "
        "tries again."]
    assert manager.connections["mute"].state not in ("running", "failed")  # still starting: not given up

    reports.clear()
    manager.tools(path, report=reports.append)  # the next turn tries again, and says so again
    assert any("MCP server 'mute' did not start within 3s" in r for r in reports)


def test_an_abandoned_start_leaves_no_unretrieved_error_for_asyncio_to_log():
    """A start given up mid-handshake (its waiter cancelled, then the server stopped): the
    holder still sets the start's outcome, which nobody awaits any more. asyncio must not
    log "Future exception was never retrieved" with a traceback when it is collected: in a
    kernel that goes to stderr, under the user's cell."""
    import asyncio
    import contextlib
    import gc

    from jupyter_brain.mcp.config import ServerConfig
    from jupyter_brain.mcp.connection import ServerConnection

    async def scenario() -> list[str]:
        seen: list[str] = []
        asyncio.get_running_loop().set_exception_handler(lambda _loop, context: seen.append(context["message"]))
        # Silent until its stdin closes, then gone: a stop does not wait on it.
        silent = {"command": sys.executable, "args": ["-c", "import sys; sys.stdin.read()"]}
        connection = ServerConnection(ServerConfig.from_entry("silent", silent))
        start = asyncio.create_task(connection.ensure_started())
        while connection._holder is None:  # the handshake has begun
            await asyncio.sleep(0.01)
        start.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await start
        await connection.stop()  # the holder ends, and sets the abandoned start's outcome
        del start
        gc.collect()
        await asyncio.sleep(0)
        return seen

    assert asyncio.run(scenario()) == []
