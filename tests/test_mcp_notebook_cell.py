"""The notebook side of MCP resources, prompts, sampling and progress, against the real
``@modelcontextprotocol/server-everything`` (npm, tests/mcp_client/npm) over stdio, in an
in-process IPython (the ``shell`` fixture) with a scripted model."""

from __future__ import annotations

import builtins
from pathlib import Path

import pytest
from IPython.core.error import UsageError

from jupyter_brain.providers.scripted import ScriptedProvider

from .mcp_client.servers import require_installed

EVERYTHING = (Path(__file__).parent / "mcp_client" / "npm" / "node_modules" / "@modelcontextprotocol"
              / "server-everything" / "dist" / "index.js")
DOC = "demo://resource/static/document/architecture.md"



@pytest.fixture(autouse=True)
def _everything_installed():
    """Skipped with the fix named where server-everything is missing; failed under CI=true."""
    require_installed(EVERYTHING, "server-everything is not installed: run `npm ci` in tests/mcp_client/npm")


@pytest.fixture()
def everything(shell):
    """The shell with server-everything configured as ``everything``; the kernel's MCP
    manager is shut down afterwards."""
    from jupyter_brain.mcp.manager import shutdown_kernel_manager

    shell.run_line_magic("agent", f"mcp add everything -- node {EVERYTHING} stdio")
    yield shell
    shutdown_kernel_manager()


def _call(name, arguments):
    return {"text": "Calling.", "tool_calls": [{"name": name, "arguments": arguments}]}


def test_resources_read_and_prompts_list(everything, capsys):
    capsys.readouterr()
    everything.run_line_magic("agent", "mcp resources")
    out = capsys.readouterr().out
    assert f"everything  {DOC}" in out and "architecture.md" in out and "text/markdown" in out
    assert "demo://resource/dynamic/text/{resourceId} (template)" in out
    everything.run_line_magic("agent", f"mcp read everything:{DOC}")
    assert "# Everything Server – Architecture" in capsys.readouterr().out
    everything.run_line_magic("agent", "mcp prompts everything")
    out = capsys.readouterr().out
    assert "args-prompt" in out and "city*, state" in out and "A prompt with two arguments" in out
    with pytest.raises(UsageError, match="no MCP server 'nope'"):
        everything.run_line_magic("agent", "mcp resources nope")
    with pytest.raises(UsageError, match="give a resource as SERVER:URI"):
        everything.run_line_magic("agent", "mcp read architecture.md")
    with pytest.raises(UsageError, match=r"^%agent mcp read everything:demo://nothing/here: "):
        everything.run_line_magic("agent", "mcp read everything:demo://nothing/here")


def test_a_resource_is_context_for_its_turn_only(everything):
    bot = ScriptedProvider(["It describes the architecture.", "Second answer."])
    everything.user_ns["bot"] = bot
    everything.run_cell_magic("agent", f"--provider bot --resource everything:{DOC}", "Summarise it.")
    result = everything.user_ns["_agent"]
    assert result.status == "completed"
    sent = bot.calls[0]["messages"]
    attached = [m for m in sent if m["role"] == "system" and "<resource ref='everything:" in m["content"]]
    assert len(attached) == 1 and attached[0].get("kind") == "hook"
    assert "Everything Server – Architecture" in attached[0]["content"]
    # never copied into the history; the next turn does not carry it
    assert all("Everything Server – Architecture" not in str(m.get("content")) for m in result.messages)
    everything.run_cell_magic("agent", "--provider bot", "And now?")
    assert all("Everything Server – Architecture" not in str(m.get("content")) for m in bot.calls[1]["messages"])


def test_a_template_resource_and_a_failing_read(everything):
    bot = ScriptedProvider(["Read it."])
    everything.user_ns["bot"] = bot
    everything.run_cell_magic("agent", "--provider bot --resource everything:demo://resource/dynamic/text/3", "What?")
    attached = [m["content"] for m in bot.calls[0]["messages"] if m.get("kind") == "hook"]
    assert attached and "demo://resource/dynamic/text/3" in attached[0]
    with pytest.raises(UsageError, match=r"--resource everything:demo://nothing/here: .*\(the turn did not run\)"):
        everything.run_cell_magic("agent", "--provider bot --resource everything:demo://nothing/here", "What?")
    assert len(bot.calls) == 1  # no model call for the refused cell
    with pytest.raises(UsageError, match="no MCP server 'other'"):
        everything.run_cell_magic("agent", "--provider bot --resource other:demo://x", "What?")


def test_an_mcp_prompt_starts_the_turn(everything):
    bot = ScriptedProvider(["Sunny.", "Fine."])
    everything.user_ns["bot"] = bot
    everything.run_cell_magic("agent", "--provider bot --mcp-prompt everything:args-prompt --arg city=Paris "
                                       "--arg 'state=Île de France'", "Answer in one word.")
    result = everything.user_ns["_agent"]
    first_user = next(m for m in result.messages if m["role"] == "user")
    assert first_user["content"] == "What's weather in Paris, Île de France?\n\nAnswer in one word."
    # a prompt alone: the line magic (IPython refuses a %%agent cell with an empty body)
    everything.run_line_magic("agent", "--provider bot --mcp-prompt everything:simple-prompt")
    last_user = [m for m in everything.user_ns["_agent"].messages if m["role"] == "user"][-1]
    assert last_user["content"] == "This is a simple prompt without arguments."


@pytest.mark.parametrize(("line", "message"), [
    ("--mcp-prompt everything:args-prompt", r"missing required argument city \(add --arg city=VALUE\)"),
    ("--mcp-prompt everything:args-prompt --arg city=X --arg zip=1", r"unknown argument 'zip'; it takes: city, state"),
    ("--mcp-prompt everything:args-prompt --arg city", r"--arg: give KEY=VALUE, got 'city'"),
    ("--mcp-prompt everything:nope", r"server 'everything' has no prompt 'nope'"),
    ("--mcp-prompt args-prompt", r"give a prompt as SERVER:NAME"),
    ("--arg city=Paris", r"--arg gives an argument of --mcp-prompt"),
])
def test_bad_prompt_flags_are_one_line_errors(everything, line, message):
    everything.user_ns["bot"] = ScriptedProvider(["never"])
    with pytest.raises(UsageError, match=message) as info:
        everything.run_cell_magic("agent", f"--provider bot {line}", "Hi.")
    assert "\n" not in str(info.value)
    assert everything.user_ns["bot"].calls == []


def _sampling_turn(shell, permission, answers=None, monkeypatch=None, prompt="Sample something."):
    """A turn whose model calls the server's sampling tool; the server asks the kernel for
    a completion, which the same scripted model gives ("Sampled words.")."""
    if answers is not None:
        asked: list[str] = []
        monkeypatch.setattr(builtins, "input", lambda prompt: asked.append(prompt) or answers.pop(0))
    bot = ScriptedProvider([
        _call("everything__trigger-sampling-request", {"prompt": "say hi", "maxTokens": 20}),
        {"text": "Sampled words.", "usage": {"input_tokens": 30, "output_tokens": 7}},
        "Done."])
    shell.user_ns["bot"] = bot
    shell.run_cell_magic("agent", f"--provider bot --permission {permission}", prompt)
    return shell.user_ns["_agent"], bot, (asked if answers is not None else None)


def test_sampling_in_auto_mode_answers_with_the_sessions_model_and_counts(everything):
    result, bot, _ = _sampling_turn(everything, "auto")
    [record] = result.tool_calls
    assert record.status == "ok" and "Sampled words." in record.output
    sampled = bot.calls[1]["messages"]
    assert sampled[0] == {"role": "system", "content": "You are a helpful test server."}
    assert "say hi" in sampled[1]["content"] and bot.calls[1]["tools"] == []
    events = everything.magics_manager.registry["AgentMagics"].manager.event_log.events(turn_id=result.turn_id)
    usage = [e for e in events if e.type == "usage" and getattr(e, "label", "")]
    assert [(e.input_tokens, e.output_tokens) for e in usage] == [(30, 7)]
    assert usage[0].label == "sampling for MCP server 'everything'"


def test_sampling_in_ask_mode_asks_and_a_refusal_leaves_the_server_usable(everything, monkeypatch):
    # the tool itself writes (not readOnly): first its approval, then the sampling request's
    result, bot, asked = _sampling_turn(everything, "ask", ["y", "n"], monkeypatch)
    assert asked[0].startswith("Allow everything__trigger-sampling-request")
    assert asked[1].startswith("Allow everything sampling (sampling) with") and "say hi" in asked[1]
    [record] = result.tool_calls
    assert record.status == "error" and "was refused: the user denied this call" in record.output
    # no completion was made: the model's next call is the turn's own, after the tool's result
    assert len(bot.calls) == 2 and bot.calls[1]["messages"][-1]["role"] == "tool"
    events = everything.magics_manager.registry["AgentMagics"].manager.event_log.events(turn_id=result.turn_id)
    decisions = [e for e in events if e.type == "approval_decision"]
    assert [d.approved for d in decisions] == [True, False]
    # the server answers the next call
    result, _, _ = _sampling_turn(everything, "ask", ["y", "y"], monkeypatch, prompt="Sample again.")
    assert "Sampled words." in result.tool_calls[0].output


def test_progress_reaches_the_tools_row(everything, capsys):
    everything.user_ns["bot"] = ScriptedProvider([
        _call("everything__trigger-long-running-operation", {"duration": 0.4, "steps": 2}), "Done."])
    everything.run_cell_magic("agent", "--provider bot", "Run it.")
    result = everything.user_ns["_agent"]
    assert result.tool_calls[0].status == "ok"
    events = everything.magics_manager.registry["AgentMagics"].manager.event_log.events(turn_id=result.turn_id)
    progress = [(e.progress, e.total) for e in events if e.type == "tool_progress"]
    assert progress == [(1.0, 2.0), (2.0, 2.0)]
    out = capsys.readouterr().out
    assert "⋯ 1/2" in out and "⋯ 2/2" in out


def test_the_roots_are_the_workspace_folder(everything, tmp_path):
    everything.run_line_magic("config", 'AgentMagics.workspace_dir = "project"')
    (tmp_path / "project").mkdir()
    everything.user_ns["bot"] = ScriptedProvider([_call("everything__get-roots-list", {}), "Done."])
    everything.run_cell_magic("agent", "--provider bot", "Which roots?")
    [record] = everything.user_ns["_agent"].tool_calls
    assert record.status == "ok" and (tmp_path / "project").resolve().as_uri() in record.output
