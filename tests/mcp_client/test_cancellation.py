"""Cancellation and unsupported requests against a real server (the demo server, which
writes to stderr when a call is cancelled): a tool timeout and a Ctrl-C send the protocol's
cancellation and the server stays usable."""

from __future__ import annotations

import signal
import threading

import pytest

from jupyter_brain.agent.events import ServerLog, ToolProgress
from jupyter_brain.agent.executor import BoundedToolExecutor, ToolTurnState
from jupyter_brain.agent.tools import AgentToolRegistry
from jupyter_brain.providers.base import ToolCall

from .servers import stdio_entry, wait_until, write_config

pytestmark = pytest.mark.mcp_server

CANCELLED = "demo: slow was cancelled by the client"


def _executor(manager, path):
    return BoundedToolExecutor(AgentToolRegistry(list(manager.tools(path, report=None)), permission_mode="auto"))


def test_a_tool_timeout_sends_the_cancellation_and_the_next_call_works(manager, tmp_path):
    path = write_config(tmp_path, {"demo": stdio_entry(tool_timeout_s=1)})
    executor = _executor(manager, path)
    outcomes = executor.execute([ToolCall(id="1", name="demo__slow", arguments={}),
                                 ToolCall(id="2", name="demo__lookup", arguments={"key": "apple"})], ToolTurnState())
    assert [o.status for o in outcomes] == ["timeout", "ok"] and outcomes[1].output == "red"
    connection = manager.connections["demo"]
    assert wait_until(lambda: CANCELLED in connection.stderr_tail())  # the server saw it
    assert connection.state == "running"


@pytest.fixture()
def python_handles_ctrl_c():
    """Python's own SIGINT handler for the test. A process started in the background by a
    non-interactive shell (scripts/test.sh's lanes: `cmd &`) inherits SIGINT ignored, and
    Python then installs no handler: a Ctrl-C would raise nothing (CI runs D1 and D2)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_during_a_call_sends_the_cancellation_and_the_server_stays_usable(manager, tmp_path,
                                                                                 python_handles_ctrl_c):
    path = write_config(tmp_path, {"demo": stdio_entry()})
    executor = _executor(manager, path)
    events, interrupted = [], threading.Event()

    def context(call):
        from jupyter_brain.agent.tool_context import ToolContext

        def emit(event):
            events.append(event)
            # the call is running on the server (its progress is in): Ctrl-C now
            if isinstance(event, ToolProgress) and not interrupted.is_set():
                interrupted.set()
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

        return ToolContext(call.id, emit=emit)

    with pytest.raises(KeyboardInterrupt):
        executor.execute([ToolCall(id="1", name="demo__slow", arguments={})], ToolTurnState(), tool_context=context)
    assert interrupted.is_set()  # the Ctrl-C came while the call ran (its progress was in)
    connection = manager.connections["demo"]
    assert wait_until(lambda: CANCELLED in connection.stderr_tail())
    assert [e.message for e in events if isinstance(e, ToolProgress)] == ["started"]
    assert manager.call("demo", "lookup", {"key": "banana"}, 30) == "yellow"


def test_a_servers_log_line_during_a_call_reaches_the_calls_context(manager, tmp_path):
    """Waited for while the call is still running (``slow`` sleeps until cancelled), so the
    line cannot arrive after the call's end, when reports are dropped."""
    from jupyter_brain.agent.tool_context import ToolContext

    path = write_config(tmp_path, {"demo": stdio_entry()})
    manager.tools(path, report=None)
    events: list = []
    context = ToolContext("c1", emit=events.append)
    outcome: list = []

    def call() -> None:
        with context.active():
            try:
                manager.call("demo", "slow", {}, 3600)
            except Exception as exc:  # noqa: BLE001 - the cancelled call's one-line error
                outcome.append(exc)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    assert wait_until(lambda: any(isinstance(e, ServerLog) for e in events)), events
    line = next(e for e in events if isinstance(e, ServerLog))
    assert (line.server, line.level, line.message, line.call_id) == ("demo", "info", "slow: started", "c1")
    context.cancel()  # as the executor does when it gives up
    worker.join(60)
    assert outcome and "cancelled" in str(outcome[0])
    assert wait_until(lambda: CANCELLED in manager.connections["demo"].stderr_tail())
    assert manager.call("demo", "lookup", {"key": "apple"}, 30) == "red"
