"""A tool that runs only as an MCP task (server-everything 2026.8.31's
``simulate-research-query``, 2025-11-25 tasks): it is offered and runs; its status messages
are its progress; an elicitation the task queues is answered; a timeout or a cancel sends
``tasks/cancel``, and the server shows the task cancelled."""

from __future__ import annotations

import threading

import pytest

from jupyter_brain.agent.events import ToolProgress
from jupyter_brain.agent.tool_context import ToolContext
from jupyter_brain.agent.tools import ToolError
from jupyter_brain.mcp import tasks
from jupyter_brain.mcp.elicitation import ElicitationAnswer

from .servers import npm_entry, write_config

pytestmark = pytest.mark.mcp_server
RESEARCH = "simulate-research-query"


@pytest.fixture(scope="module")
def everything(tmp_path_factory):
    from jupyter_brain.mcp.manager import MCPManager

    folder = tmp_path_factory.mktemp("everything-tasks")
    path = write_config(folder / "data", {"ev": npm_entry("mcp-server-everything", "stdio")})
    manager = MCPManager(startup_timeout_s=120)
    manager.tools(path, report=None)
    yield manager, path
    manager.shutdown()


def test_a_task_only_tool_is_offered_runs_and_shows_its_stages(everything):
    manager, path = everything
    lines: list[str] = []
    tools = {s.name: s for s in manager.tools(path, report=lines.append)}
    assert f"ev__{RESEARCH}" in tools and not any(RESEARCH in line for line in lines)
    events: list = []
    context = ToolContext("call-1", step=1, emit=events.append)
    with context.active():
        out = manager.call("ev", RESEARCH, {"topic": "tides"}, 60)
    assert str(out).startswith("# Research Report: tides")
    messages = [e.message for e in events if isinstance(e, ToolProgress)]
    assert messages[:1] == ["Gathering sources..."] and "Generating report..." in messages
    assert [e.progress for e in events if isinstance(e, ToolProgress)] == list(range(1, len(messages) + 1))


def test_an_ambiguous_query_asks_through_elicitation(everything):
    manager, path = everything
    asked = []

    def elicitor(request):
        asked.append(request)
        value = request.fields["interpretation"]["oneOf"][0]["const"]
        return ElicitationAnswer("accept", {"interpretation": value})

    manager.set_elicitor(elicitor)
    try:
        out = str(manager.call("ev", RESEARCH, {"topic": "python", "ambiguous": True}, 60))
    finally:
        manager.set_elicitor(None)
    (request,) = asked
    assert request.required == ("interpretation",) and "multiple interpretations" in request.message
    chosen = request.fields["interpretation"]["oneOf"][0]["const"]
    assert f"- **Clarification**: {chosen}" in out


def test_a_timeout_cancels_the_task_on_the_server(everything, monkeypatch):
    manager, _ = everything
    cancelled: list[str] = []
    done = threading.Event()
    real = tasks._cancel

    async def spy(session, task_id, server):
        await real(session, task_id, server)
        import mcp_types as types

        state = await session.send_request(
            types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id)), types.GetTaskResult)
        cancelled.append(state.status)
        done.set()

    monkeypatch.setattr(tasks, "_cancel", spy)
    with pytest.raises(ToolError, match="did not answer within 1.5s"):
        manager.call("ev", RESEARCH, {"topic": "slow"}, 1.5)  # the research takes 4 s
    assert done.wait(20) and cancelled == ["cancelled"]
    assert "Research Report" in str(manager.call("ev", RESEARCH, {"topic": "after"}, 60))  # still usable


def test_ctrl_c_cancels_the_task(everything, monkeypatch):
    manager, _ = everything
    sent: list[str] = []
    done = threading.Event()
    real = tasks._cancel

    async def spy(session, task_id, server):
        await real(session, task_id, server)
        sent.append(task_id)
        done.set()

    monkeypatch.setattr(tasks, "_cancel", spy)
    events: list = []
    context = ToolContext("call-2", step=1, emit=events.append)
    threading.Timer(1.5, context.cancel).start()  # the executor abandons the call, as on Ctrl-C
    with context.active(), pytest.raises(ToolError, match="was cancelled"):
        manager.call("ev", RESEARCH, {"topic": "interrupted"}, 60)
    assert done.wait(20) and len(sent) == 1
