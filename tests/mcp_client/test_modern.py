"""The 2026-07-28 revision against a real server from the Python SDK 2.x
(``modern_server.py``), over stdio and Streamable HTTP: stateless discovery (no
``initialize``); a task-only tool through the ``io.modelcontextprotocol/tasks`` extension
(its progress, its result, a failure, a cancel by timeout or Ctrl-C, an ``input_required``
task answered with ``tasks/update``); an ``input_required`` elicitation; roots and sampling
not declared to it; and servers that refuse roots and sampling still serving the call."""

from __future__ import annotations

import json
import sys
import threading

import pytest

from jupyter_brain.agent.events import ToolProgress
from jupyter_brain.agent.tool_context import ToolContext
from jupyter_brain.agent.tools import ToolError
from jupyter_brain.mcp.elicitation import ElicitationAnswer

from .servers import exit_code, start_http_demo, wait_until, write_config

pytestmark = pytest.mark.mcp_server
MODERN = __import__("pathlib").Path(__file__).with_name("modern_server.py")
TASKS = "io.modelcontextprotocol/tasks"


def modern_entry(*flags: str) -> dict:
    return {"command": sys.executable, "args": [str(MODERN), *flags]}


@pytest.fixture(scope="module", params=["stdio", "http"])
def modern(request, tmp_path_factory):
    """A manager connected to the modern server as "m" (stdio, then HTTP); yields (manager, path)."""
    from jupyter_brain.mcp.manager import MCPManager

    process = None
    if request.param == "http":
        url, process = start_http_demo(MODERN)
        assert wait_until(lambda: answers_http(url), 120)
        entry: dict = {"url": url}
    else:
        entry = modern_entry()
    path = write_config(tmp_path_factory.mktemp(f"modern-{request.param}") / "data", {"m": entry})
    manager = MCPManager(startup_timeout_s=120)
    manager.tools(path, report=None)
    yield manager, path
    manager.shutdown()
    if process is not None:
        process.kill()
        exit_code(process)


def answers_http(url: str) -> bool:
    """The server answers HTTP. Waited for because the SDK's ``server/discover`` probe gives up
    after 10 s and falls back to the 2025-11-25 handshake, which a slow start on a loaded
    machine would otherwise cause (the HTTP server serves both revisions)."""
    import urllib.error
    import urllib.request

    try:
        urllib.request.urlopen(url, timeout=5).close()
    except urllib.error.HTTPError:
        return True  # any HTTP answer (a GET is refused): it is up
    except OSError:
        return False
    return True


def seen(manager) -> dict:
    return json.loads(str(manager.call("m", "seen", {}, 30)))


def progress_of(events: list) -> list[str]:
    return [e.message for e in events if isinstance(e, ToolProgress)]


def test_discovery_is_stateless_and_declares_tasks_without_roots_or_sampling(modern):
    manager, path = modern
    tools = {s.name for s in manager.tools(path, report=None)}
    assert {"m__research", "m__approve", "m__greet"} <= tools  # task-only tools are offered
    connection = manager.connections["m"]
    assert connection.protocol == "2026-07-28" and connection.notes == []
    assert TASKS in (connection._client.server_capabilities.extensions or {})
    what = seen(manager)
    assert what["methods"][0] == "server/discover" and "initialize" not in what["methods"]
    declared = what["call_capabilities"]
    assert TASKS in declared["extensions"] and "elicitation" in declared
    assert "roots" not in declared and "sampling" not in declared


def test_a_task_only_tool_runs_shows_progress_and_returns_its_result(modern):
    manager, _ = modern
    events: list = []
    context = ToolContext("call-t", step=1, emit=events.append)
    with context.active():
        out = manager.call("m", "research", {"topic": "tides", "steps": 3, "seconds": 0.4}, 60)
    assert out == "report on tides"
    messages = progress_of(events)
    assert "step 3 of 3" in messages and messages[-1] == "done"
    assert [e.progress for e in events if isinstance(e, ToolProgress)] == list(range(1, len(messages) + 1))
    assert "tasks/get" in seen(manager)["methods"]


def test_a_failed_task_is_one_clear_error(modern):
    manager, _ = modern
    with pytest.raises(ToolError, match="the task of 'research' failed: the archive is offline"):
        manager.call("m", "research", {"topic": "x", "steps": 1, "seconds": 0.1, "fail": True}, 60)


def test_a_task_result_that_breaks_its_output_schema_is_an_error_not_a_crash(modern):
    manager, _ = modern
    generation = manager.connections["m"].generation
    with pytest.raises(ToolError, match="returned an invalid result: .*output schema"):
        manager.call("m", "shaped", {}, 60)
    assert manager.connections["m"].generation == generation and manager.connections["m"].state == "running"


def test_a_timeout_cancels_the_task(modern):
    manager, _ = modern
    before = seen(manager)["cancelled"]
    with pytest.raises(ToolError, match="did not answer within 1.5s"):
        manager.call("m", "research", {"topic": "slow", "steps": 100, "seconds": 0.5}, 1.5)
    assert wait_until(lambda: seen(manager)["cancelled"] == before + 1, 30)
    assert manager.call("m", "echo", {"text": "still here"}, 30) == "echo: still here"


def test_ctrl_c_cancels_the_task(modern):
    manager, _ = modern
    before = seen(manager)["cancelled"]
    events: list = []
    context = ToolContext("call-c", step=1, emit=events.append)
    threading.Timer(1.0, context.cancel).start()  # the executor abandons the call, as on Ctrl-C
    with context.active(), pytest.raises(ToolError, match="was cancelled"):
        manager.call("m", "research", {"topic": "interrupted", "steps": 100, "seconds": 0.5}, 60)
    assert wait_until(lambda: seen(manager)["cancelled"] == before + 1, 30)


def test_a_task_that_needs_input_asks_once_and_gets_the_answer(modern):
    manager, _ = modern
    asked = []

    def elicitor(request):
        asked.append(request)
        return ElicitationAnswer("accept", {"ok": True})

    manager.set_elicitor(elicitor)
    try:
        assert manager.call("m", "approve", {"item": "deploy"}, 60) == "deploy: approved"
    finally:
        manager.set_elicitor(None)
    (request,) = asked  # polled several times while waiting, asked once
    assert (request.server, request.message, request.required) == ("m", "Approve deploy?", ("ok",))
    assert manager.call("m", "approve", {"item": "drop"}, 60) == "drop: decline"  # headless: declined


def test_an_input_required_result_is_answered_by_the_elicitor(modern):
    manager, _ = modern
    manager.set_elicitor(lambda request: ElicitationAnswer("accept", {"name": "Ada"}))
    try:
        assert manager.call("m", "greet", {}, 60) == "hello Ada"
    finally:
        manager.set_elicitor(None)
    assert manager.call("m", "greet", {}, 60) == "decline"


def test_sampling_asked_as_input_required_or_inside_a_task_is_answered_by_the_sampler(modern):
    """Not declared to a 2026-07-28 server, but a request it still sends is answered."""
    from jupyter_brain.mcp.client_hooks import SamplingReply

    manager, _ = modern
    asked = []
    manager.set_sampler(lambda request: (asked.append(request), SamplingReply(text="Tides turn.", model="fake"))[1])
    try:
        assert manager.call("m", "haiku", {"topic": "tides"}, 60) == "haiku: Tides turn."
        assert manager.call("m", "summarise", {"text": "the sea"}, 60) == "summary: Tides turn."
    finally:
        manager.set_sampler(None)
    assert [r.messages for r in asked] == [[("user", "A haiku about tides")], [("user", "Summarise the sea")]]
    with pytest.raises(ToolError, match="sampling is not enabled in this kernel"):
        manager.call("m", "summarise", {"text": "the sea"}, 60)  # no sampler: one line, the task cancelled
    assert manager.call("m", "echo", {"text": "still here"}, 30) == "echo: still here"


# -- roots and sampling: kept for the handshake era, never a reason to fail ------------------
def _start(manager, tmp_path, *flags: str) -> tuple[list[str], dict]:
    path = write_config(tmp_path / "data", {"m": modern_entry(*flags)})
    lines: list[str] = []
    tools = {s.name: s for s in manager.tools(path, report=lines.append)}
    return lines, tools


def test_a_handshake_era_server_is_offered_roots_and_sampling(manager, tmp_path):
    lines, tools = _start(manager, tmp_path, "--legacy")
    assert lines == [] and manager.connections["m"].protocol == "2025-11-25"
    declared = seen(manager)["initialize_capabilities"]
    assert "roots" in declared and "sampling" in declared and "elicitation" in declared


def test_a_modern_server_that_refuses_roots_and_sampling_serves_the_call(manager, tmp_path):
    lines, tools = _start(manager, tmp_path, "--refuse")
    assert lines == [] and manager.connections["m"].notes == []  # they were never declared to it
    assert tools["m__echo"](text="hi") == "echo: hi"
    assert manager.call("m", "research", {"topic": "t", "steps": 1, "seconds": 0.1}, 60) == "report on t"


def test_an_initialize_refused_over_roots_and_sampling_is_retried_without_them(manager, tmp_path, monkeypatch,
                                                                             capsys):
    lines, tools = _start(manager, tmp_path, "--refuse", "--legacy")
    connection = manager.connections["m"]
    assert connection.state == "running" and connection.protocol == "2025-11-25"
    (note,) = connection.notes
    assert "refused the roots and sampling capabilities" in note and "removed from this server" in note
    assert lines == [note]  # said once, in the turn's report
    assert tools["m__echo"](text="hi") == "echo: hi"
    declared = seen(manager)["initialize_capabilities"]
    assert "roots" not in declared and "sampling" not in declared and "elicitation" in declared
    assert manager.tools(write_config(tmp_path / "data", {"m": modern_entry("--refuse", "--legacy")}),
                         report=lines.append) and lines == [note]  # not said again
    from types import SimpleNamespace

    from jupyter_brain.mcp import manager as manager_module
    from jupyter_brain.notebook.subcommands.mcp import _list

    monkeypatch.setattr(manager_module, "_KERNEL", manager)
    _list(SimpleNamespace(data_dir=tmp_path / "data"), [])
    listed = capsys.readouterr().out
    assert "(MCP 2025-11-25)" in listed and "refused the roots and sampling capabilities" in listed


def test_a_call_refused_over_roots_and_sampling_is_retried_without_them(manager, tmp_path):
    lines, tools = _start(manager, tmp_path, "--refuse-calls", "--legacy")
    assert lines == [] and manager.connections["m"].offer_deprecated
    assert tools["m__echo"](text="again") == "echo: again"  # refused, reconnected, called again
    (note,) = manager.connections["m"].notes
    assert "no longer serves clients that declare roots" in note


def test_other_refusals_are_not_retried(manager, tmp_path):
    _start(manager, tmp_path, "--legacy")
    generation = manager.connections["m"].generation
    with pytest.raises(ToolError, match="missing_tool"):
        manager.call("m", "missing_tool", {}, 30)
    connection = manager.connections["m"]
    assert connection.notes == [] and connection.offer_deprecated and connection.generation == generation
