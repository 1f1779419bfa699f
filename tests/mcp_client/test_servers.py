"""Real MCP servers through the manager: stdio and streamable HTTP, the reference
``mcp-server-time``, and every way a server can fail — none of them hangs or raises."""

from __future__ import annotations

import hashlib
import os
import signal
import sys
import time

import pytest

from jupyter_brain.agent.executor import BoundedToolExecutor, ToolTurnState
from jupyter_brain.agent.tools import AgentToolRegistry, ToolError
from jupyter_brain.providers.base import ToolCall

from .servers import alive, stdio_entry, write_config

pytestmark = pytest.mark.mcp_server


def _tools(manager, path, reports=None):
    return {s.name: s for s in manager.tools(path, report=(reports.append if reports is not None else None))}


def test_stdio_server_tools_and_results(manager, tmp_path):
    path = write_config(tmp_path, {"demo": stdio_entry()})
    tools = _tools(manager, path)
    assert {"demo__lookup", "demo__delete_item", "demo__chart", "demo__readme", "demo__fail",
            "demo__hang", "demo__crash"} <= set(tools)
    assert tools["demo__lookup"].effect == "read" and tools["demo__delete_item"].effect == "write"
    assert tools["demo__lookup"].description == "Look up the colour of a fruit."
    assert tools["demo__lookup"](key="apple") == "red"
    assert tools["demo__readme"]() == "[resource file:///demo/README.md]\n# Demo\nA demo server."
    chart = tools["demo__chart"]()  # (#16) the image is attached for the model, and noted
    assert [im.media_type for im in chart.images] == ["image/png"]
    note = chart.text
    assert note.startswith("[image: image/png, 73 bytes, saved as artifact 'image_")
    handle = note.split("'")[1]
    assert (tmp_path / "artifacts" / f"{handle}.png").read_bytes().startswith(b"\x89PNG")
    with pytest.raises(ToolError, match="something broke"):
        tools["demo__fail"]()
    # the same ToolSpecs on the next turn: nothing restarts
    assert _tools(manager, path)["demo__lookup"] is tools["demo__lookup"]


def test_through_the_executor_errors_and_large_results_are_ordinary_outcomes(manager, tmp_path):
    path = write_config(tmp_path, {"demo": stdio_entry()})
    executor = BoundedToolExecutor(AgentToolRegistry(list(manager.tools(path, report=None)), permission_mode="auto"))
    outcomes = executor.execute([
        ToolCall(id="1", name="demo__fail", arguments={"message": "the disk is full"}),
        ToolCall(id="2", name="demo__big", arguments={"n": 30_000}),
        ToolCall(id="3", name="demo__lookup", arguments={"key": "banana"}),
    ], ToolTurnState())
    assert [o.status for o in outcomes] == ["error", "ok", "ok"]
    assert "the disk is full" in outcomes[0].output
    assert outcomes[1].artifact is not None and "read_artifact" in outcomes[1].output  # offloaded
    assert executor.artifacts.get(outcomes[1].artifact) == "x" * 30_000
    assert outcomes[2].output == "yellow"


def test_a_hanging_tool_times_out_and_the_server_stays_usable(manager, tmp_path):
    path = write_config(tmp_path, {"demo": stdio_entry(tool_timeout_s=1)})
    tools = _tools(manager, path)
    assert tools["demo__hang"].timeout_s == 1
    executor = BoundedToolExecutor(AgentToolRegistry(list(tools.values()), permission_mode="auto"))
    started = time.monotonic()
    [outcome] = executor.execute([ToolCall(id="1", name="demo__hang", arguments={})], ToolTurnState())
    assert outcome.status == "timeout" and "timed out after 1s" in outcome.output
    assert time.monotonic() - started < 3  # not retried: a second call would run beside the first
    with pytest.raises(ToolError, match="did not answer within 1s"):
        manager.call("demo", "hang", {}, timeout_s=1)  # the loop is bounded too
    assert tools["demo__lookup"](key="apple") == "red"


def test_a_crash_mid_call_fails_that_call_and_the_server_restarts_on_next_use(manager, tmp_path):
    path = write_config(tmp_path, {"demo": stdio_entry()})
    tools = _tools(manager, path)
    first = tools["demo__pid"]()
    with pytest.raises(ToolError, match="stopped during the call .* restarted on the next call"):
        tools["demo__crash"]()
    assert manager.connections["demo"].state == "crashed"
    assert not alive(int(first))
    second = tools["demo__pid"]()  # the same spec: the server starts again
    assert second != first and manager.connections["demo"].state == "running"


def test_a_server_that_died_while_idle_is_restarted_transparently(manager, tmp_path):
    path = write_config(tmp_path, {"demo": stdio_entry()})
    tools = _tools(manager, path)
    first = int(tools["demo__pid"]())
    os.kill(first, signal.SIGKILL)
    assert _gone(first)
    time.sleep(0.2)  # the client sees the pipe close
    assert int(tools["demo__pid"]()) != first  # nothing had been sent: restarted, then called


def _gone(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_a_server_that_cannot_start_is_reported_with_its_stderr(manager, tmp_path, monkeypatch):
    monkeypatch.setenv("JB_DEMO_TOKEN", "tok-1234567890")
    path = write_config(tmp_path, {"demo": stdio_entry(), "broken": stdio_entry(
        "fail", env={"DEMO_TOKEN": "${JB_DEMO_TOKEN}"})})
    reports: list[str] = []
    tools = _tools(manager, path, reports)
    assert tools and all(name.startswith("demo__") for name in tools)  # the others still work
    [report] = reports
    assert report.startswith("MCP server 'broken' failed to start: the server closed the connection")
    assert "cannot open the database at /nonexistent/db.sqlite (token ***)" in report
    assert "tok-1234567890" not in report  # an env value never reaches a message
    assert "`%agent mcp restart broken` tries again" in report
    reports.clear()
    _tools(manager, path, reports)
    assert reports == []  # not retried (nor reported) on every turn
    assert manager.restart("broken").state == "failed"


def test_a_missing_environment_variable_fails_that_server_clearly(manager, tmp_path, monkeypatch):
    monkeypatch.delenv("JB_NOT_SET", raising=False)
    path = write_config(tmp_path, {"demo": stdio_entry(env={"DEMO_TOKEN": "${JB_NOT_SET}"})})
    reports: list[str] = []
    assert _tools(manager, path, reports) == {}
    assert "environment variable JB_NOT_SET is not set" in reports[0]


def test_env_references_reach_the_server_and_never_come_back(manager, tmp_path, monkeypatch):
    monkeypatch.setenv("JB_DEMO_TOKEN", "abc-123")
    path = write_config(tmp_path, {"demo": stdio_entry(env={
        "DEMO_TOKEN": "${JB_DEMO_TOKEN}", "API_KEY": "pasted-key", "LOG_LEVEL": "debug"})})
    tools = _tools(manager, path)
    assert tools["demo__env_digest"](name="DEMO_TOKEN") == hashlib.sha256(b"abc-123").hexdigest()
    assert tools["demo__env_value"](name="DEMO_TOKEN") == "***"  # masked in what the model and log see
    assert tools["demo__env_value"](name="API_KEY") == "***"  # a literal under a secret-like name
    assert tools["demo__env_value"](name="LOG_LEVEL") == "debug"
    with pytest.raises(ToolError) as info:
        tools["demo__fail"](message="token abc-123 rejected")
    assert str(info.value) == "Error executing tool fail: token *** rejected"


def test_a_server_that_never_answers_the_handshake_is_given_up(manager, tmp_path):
    path = write_config(tmp_path, {"mute": {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"],
                                            "startup_timeout_s": 1}})
    reports: list[str] = []
    started = time.monotonic()
    assert _tools(manager, path, reports) == {}
    assert time.monotonic() - started < 8
    assert "did not complete the MCP handshake within 1s" in reports[0]


def test_streamable_http_server(manager, tmp_path, http_server):
    url, process = http_server
    path = write_config(tmp_path, {"web": {"type": "http", "url": url}})
    tools = _tools(manager, path)
    assert tools["web__lookup"](key="banana") == "yellow"
    assert tools["web__chart"]().text.startswith("[image: image/png")
    process.kill()
    process.wait(5)
    started = time.monotonic()
    with pytest.raises(ToolError, match="MCP server 'web'"):
        tools["web__lookup"](key="apple")
    assert time.monotonic() - started < 10
    with pytest.raises(ToolError, match="could not be restarted"):
        tools["web__lookup"](key="apple")


def test_an_http_server_that_is_not_there(manager, tmp_path):
    from .servers import free_port

    path = write_config(tmp_path, {"web": {"type": "http", "url": f"http://127.0.0.1:{free_port()}/mcp"}})
    reports: list[str] = []
    assert _tools(manager, path, reports) == {}
    assert reports[0].startswith("MCP server 'web' failed to start: ConnectError")


def test_the_reference_time_server_from_pypi(manager, tmp_path):
    path = write_config(tmp_path, {"time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]}})
    tools = _tools(manager, path)
    assert {"time__get_current_time", "time__convert_time"} <= set(tools)
    schema = tools["time__convert_time"].input_schema
    assert schema["required"] == ["source_timezone", "time", "target_timezone"]
    out = tools["time__convert_time"](source_timezone="Europe/Paris", time="12:00", target_timezone="Asia/Tokyo")
    assert '"timezone": "Asia/Tokyo"' in out and "T20:00:00+09:00" in out
    with pytest.raises(ToolError):
        tools["time__get_current_time"](timezone="Not/AZone")


def test_editing_the_file_stops_removed_servers_and_restarts_changed_ones(manager, tmp_path):
    path = write_config(tmp_path, {"a": stdio_entry(), "b": stdio_entry()})
    tools = _tools(manager, path)
    pid_a, pid_b = int(tools["a__pid"]()), int(tools["b__pid"]())
    path = write_config(tmp_path, {"a": stdio_entry(tool_timeout_s=5)})
    tools = _tools(manager, path)
    assert set(manager.connections) == {"a"} and not any(n.startswith("b__") for n in tools)
    assert not alive(pid_b) and not alive(pid_a)  # "a" changed: restarted
    assert int(tools["a__pid"]()) != pid_a
