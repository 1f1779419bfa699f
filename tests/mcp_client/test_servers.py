"""Real MCP servers through the manager: stdio and streamable HTTP, the reference
``mcp-server-time``, and every way a server can fail — none of them hangs or raises."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import signal
import socket
import sys
import uuid
from zoneinfo import ZoneInfo

import pytest

from jupyter_brain.agent.executor import BoundedToolExecutor, ToolTurnState
from jupyter_brain.agent.tools import AgentToolRegistry, ToolError
from jupyter_brain.mcp.manager import SERVER_GRACE_S
from jupyter_brain.providers.base import ToolCall

from .servers import alive, exit_code, gone, processes_with, stdio_entry, wait_until, write_config

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
    # Not retried: a second call would run beside the first on the server.
    assert tools["demo__hang"].retry_on_timeout is False
    executor = BoundedToolExecutor(AgentToolRegistry(list(tools.values()), permission_mode="auto"))
    [outcome] = executor.execute([ToolCall(id="1", name="demo__hang", arguments={})], ToolTurnState())
    assert outcome.status == "timeout"
    assert outcome.output == ("Tool 'demo__hang' timed out after 1s. It is blocked for the rest of this turn; "
                              "try a cheaper approach.")  # no "(retried once)"
    with pytest.raises(ToolError, match="did not answer within 1s"):
        manager.call("demo", "hang", {}, timeout_s=1)  # the loop is bounded too
    # Called as a tool, the server has longer than the tool's 1 s: the executor's timeout
    # (which blocks the tool) always comes first, never the server's as a plain error.
    with pytest.raises(ToolError, match=f"did not answer within {1 + SERVER_GRACE_S:g}s"):
        tools["demo__hang"]()
    # Still usable (asked without the server's 1 s limit, which a loaded machine could miss).
    assert manager.call("demo", "lookup", {"key": "apple"}, timeout_s=120) == "red"
    # The server began each of the three hang calls once: nothing was sent again.
    def started() -> int:
        return int(manager.call("demo", "started", {"name": "hang"}, timeout_s=120))

    assert wait_until(lambda: started() >= 3)
    assert started() == 3


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
    assert gone(first)
    assert wait_until(lambda: _client_saw_it_close(manager.connections["demo"]))
    assert int(tools["demo__pid"]()) != first  # nothing had been sent: restarted, then called


def _client_saw_it_close(connection) -> bool:
    """The client has noticed its server's end (what a call checks before sending)."""
    from jupyter_brain.mcp.connection import RUNNING, _closed

    client = connection._client
    return connection.state != RUNNING or client is None or _closed(client)


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
    marker = f"jb-mute-{uuid.uuid4().hex}"  # in the process's command line, to find it
    path = write_config(tmp_path, {"mute": {"command": sys.executable,
                                            "args": ["-c", "import time; time.sleep(600)", marker],
                                            "startup_timeout_s": 1}})
    reports: list[str] = []
    assert _tools(manager, path, reports) == {}
    assert "did not complete the MCP handshake within 1s" in reports[0]  # its own 1 s, not the manager's 15
    assert manager.connections["mute"].state == "failed"
    assert wait_until(lambda: not processes_with(marker))  # given up means stopped, not left running


def test_streamable_http_server(manager, tmp_path, http_server):
    url, process = http_server
    path = write_config(tmp_path, {"web": {"type": "http", "url": url}})
    reports: list[str] = []
    tools = _tools(manager, path, reports)
    assert "web__lookup" in tools, reports
    assert tools["web__lookup"](key="banana") == "yellow"
    assert tools["web__chart"]().text.startswith("[image: image/png")
    process.kill()
    assert exit_code(process) is not None
    # The lost connection is noticed (not waited out as a timeout); the next call restarts it.
    with pytest.raises(ToolError, match=r"^MCP server 'web' stopped during the call \(it crashed or closed the "
                                        r"connection\)\. It will be restarted on the next call\.$"):
        tools["web__lookup"](key="apple")
    with pytest.raises(ToolError, match="could not be restarted"):
        tools["web__lookup"](key="apple")


def test_an_http_server_that_is_not_there(manager, tmp_path):
    with socket.socket() as held:  # bound, never listening: a connection is refused, and no other process gets the port
        held.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{held.getsockname()[1]}/mcp"
        path = write_config(tmp_path, {"web": {"type": "http", "url": url}})
        reports: list[str] = []
        assert _tools(manager, path, reports) == {}
    assert reports[0].startswith("MCP server 'web' failed to start: ConnectError")


def test_the_reference_time_server_from_pypi(manager, tmp_path):
    # Run under faketime (`faketime 2027-07-15 pytest ...`) to check another day: the SDK
    # gives a server only a few of our variables, so faketime's are passed on by reference.
    faked = {k: f"${{{k}}}" for k in os.environ
             if "FAKETIME" in os.environ and (k == "LD_PRELOAD" or k.startswith("FAKETIME"))}
    path = write_config(tmp_path, {"time": {"command": sys.executable, "args": ["-m", "mcp_server_time"],
                                            "env": faked}})
    tools = _tools(manager, path)
    assert {"time__get_current_time", "time__convert_time"} <= set(tools)
    schema = tools["time__convert_time"].input_schema
    assert schema["required"] == ["source_timezone", "time", "target_timezone"]
    out = tools["time__convert_time"](source_timezone="Europe/Paris", time="12:00", target_timezone="Asia/Tokyo")
    # The server converts 12:00 of its today in Paris: 20:00 in Tokyo in winter, 19:00 in
    # summer. The expectation is worked out for the day it used.
    result = json.loads(out)
    source = dt.datetime.fromisoformat(result["source"]["datetime"])
    noon = dt.datetime.combine(source.date(), dt.time(12, 0), tzinfo=ZoneInfo("Europe/Paris"))
    assert source == noon and source.utcoffset() == noon.utcoffset()
    expected = noon.astimezone(ZoneInfo("Asia/Tokyo"))
    assert result["target"]["timezone"] == "Asia/Tokyo"
    assert result["target"]["datetime"] == expected.isoformat(timespec="seconds")
    assert f"T{expected:%H}:00:00+09:00" in out
    hours = (expected.utcoffset() - noon.utcoffset()).total_seconds() / 3600
    assert result["time_difference"] == f"{hours:+.1f}h"  # +8.0h in winter, +7.0h in summer
    assert result["source"]["is_dst"] is bool(noon.dst())
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


def test_a_changed_tool_list_is_read_again_on_the_next_turn(manager, tmp_path):
    """``notifications/tools/list_changed``: the next turn's tools include the new one, and
    the tools that did not change keep working."""
    path = write_config(tmp_path, {"demo": stdio_entry()})
    tools = _tools(manager, path)
    assert "demo__grown" not in tools
    assert tools["demo__grow"]() == "added the tool grown"
    connection = manager.connections["demo"]
    assert wait_until(lambda: connection.tools_stale or connection.tools_version > 0)
    again = _tools(manager, path)
    assert again["demo__grown"]() == "grown here"
    assert again["demo__lookup"](key="apple") == "red"
    assert connection.tools_version == 1 and not connection.tools_stale
