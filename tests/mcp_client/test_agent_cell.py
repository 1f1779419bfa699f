"""``%agent mcp ...`` and ``%%agent`` with MCP tools, in an in-process IPython (the
``shell`` fixture) with a scripted model: the tools run, ask, and follow the permissions."""

from __future__ import annotations

import builtins
import json
import sys

import pytest
from IPython.core.error import UsageError

from jupyter_brain.providers.scripted import ScriptedProvider

from .servers import DEMO

pytestmark = [pytest.mark.mcp_server, pytest.mark.usefixtures("shutdown_kernel_mcp")]


def _add_demo(shell):
    shell.run_line_magic("agent", f"mcp add demo -- {sys.executable} {DEMO}")


def _call(name, arguments):
    return {"text": "Calling.", "tool_calls": [{"name": name, "arguments": arguments}]}


def test_add_list_and_remove(shell, capsys):
    shell.run_line_magic("agent", "mcp list")
    assert "no MCP servers in .jupyter_brain/mcp.json" in capsys.readouterr().out
    shell.run_line_magic("agent", f"mcp add demo --env JB_TOKEN --env MODE=fast -- {sys.executable} {DEMO}")
    shell.run_line_magic("agent", "mcp add web --header Authorization=Bearer_${JB_TOKEN} http://127.0.0.1:9/mcp")
    out = capsys.readouterr().out
    assert "added MCP server 'demo' in .jupyter_brain/mcp.json; it starts with the next %%agent turn" in out
    saved = json.loads(open(".jupyter_brain/mcp.json").read())["mcpServers"]
    assert saved["demo"] == {"command": sys.executable, "args": [str(DEMO)],
                             "env": {"JB_TOKEN": "${JB_TOKEN}", "MODE": "fast"}}
    assert saved["web"] == {"type": "http", "url": "http://127.0.0.1:9/mcp",
                            "headers": {"Authorization": "Bearer_${JB_TOKEN}"}}
    shell.run_line_magic("agent", "mcp list")
    out = capsys.readouterr().out
    assert f"demo    stdio  not started  -      python {DEMO}  env: JB_TOKEN, MODE" in out
    assert "web     http   not started  -      http://127.0.0.1:9/mcp  headers: Authorization" in out
    shell.run_line_magic("agent", "mcp remove web")
    assert "removed MCP server 'web'" in capsys.readouterr().out
    with pytest.raises(UsageError, match="no server 'web'"):
        shell.run_line_magic("agent", "mcp remove web")
    with pytest.raises(UsageError, match="give a URL, or --"):
        shell.run_line_magic("agent", "mcp add x notaurl")
    with pytest.raises(UsageError, match="letters, digits"):
        shell.run_line_magic("agent", "mcp add 'bad name' -- cmd")
    with pytest.raises(UsageError, match="unknown action"):
        shell.run_line_magic("agent", "mcp frobnicate")


def test_a_turn_calls_an_mcp_tool(shell, capsys):
    _add_demo(shell)
    bot = ScriptedProvider([_call("demo__lookup", {"key": "apple"}), "Apples are red."])
    shell.user_ns["bot"] = bot
    shell.run_cell_magic("agent", "--provider bot", "What colour is an apple?")
    result = shell.user_ns["_agent"]
    assert result.status == "completed" and result.text == "Apples are red."
    [record] = result.tool_calls
    assert (record.name, record.status) == ("demo__lookup", "ok")
    tool_message = next(m for m in result.messages if m["role"] == "tool")
    assert tool_message["content"] == "red"
    offered = {t["name"]: t for t in bot.calls[0]["tools"]}
    assert offered["demo__lookup"]["description"] == "Look up the colour of a fruit."
    assert offered["demo__lookup"]["input_schema"]["required"] == ["key"]
    capsys.readouterr()
    shell.run_line_magic("agent", "mcp list")
    out = capsys.readouterr().out
    assert f"demo    stdio  running  15     python {DEMO}" in out
    shell.run_line_magic("agent", "tools")
    out = capsys.readouterr().out
    assert "demo__lookup" in out and "demo__delete_item write    ask" in out


@pytest.mark.parametrize(("answer", "status", "left"), [("y", "ok", "no entry for 'banana'"), ("n", "denied", "yellow")])
def test_a_destructive_tool_asks_first(shell, monkeypatch, answer, status, left):
    _add_demo(shell)
    asked = []
    monkeypatch.setattr(builtins, "input", lambda prompt: asked.append(prompt) or answer)  # no widget: stdin
    shell.user_ns["bot"] = ScriptedProvider([
        _call("demo__delete_item", {"key": "banana"}), _call("demo__lookup", {"key": "banana"}), "Done."])
    shell.run_cell_magic("agent", "--provider bot --permission ask", "Delete the banana.")
    result = shell.user_ns["_agent"]
    assert [r.status for r in result.tool_calls] == [status, "ok"]
    assert asked == ['Allow demo__delete_item (write) with {"key": "banana"}? [y/N] ']
    assert [m["content"] for m in result.messages if m["role"] == "tool"][1] == left


def test_read_only_mode_and_deny_refuse_mcp_tools(shell, monkeypatch):
    _add_demo(shell)
    monkeypatch.setattr(builtins, "input", lambda prompt: pytest.fail("nothing may ask in read-only mode"))
    shell.user_ns["bot"] = ScriptedProvider([_call("demo__delete_item", {"key": "apple"}), "Could not."])
    shell.run_cell_magic("agent", "--provider bot --permission read-only", "Delete the apple.")
    [record] = shell.user_ns["_agent"].tool_calls
    assert record.status == "denied" and "read-only" in record.output
    shell.run_line_magic("agent", "deny demo__lookup")
    shell.user_ns["bot"] = ScriptedProvider([_call("demo__lookup", {"key": "apple"}), "Could not."])
    shell.run_cell_magic("agent", "--provider bot", "Look up the apple.")
    [record] = shell.user_ns["_agent"].tool_calls
    assert record.status == "denied"


def test_a_failing_server_does_not_stop_the_turn(shell, capsys):
    shell.run_line_magic("agent", f"mcp add broken -- {sys.executable} {DEMO} fail")
    shell.user_ns["bot"] = ScriptedProvider(["No tools needed."])
    shell.run_cell_magic("agent", "--provider bot", "Hello")
    assert shell.user_ns["_agent"].status == "completed"
    out = capsys.readouterr().out
    assert "MCP server 'broken' failed to start" in out and "cannot open the database" in out
    shell.run_line_magic("agent", "mcp list")
    out = capsys.readouterr().out
    assert "broken  stdio  failed" in out and "cannot open the database" in out
