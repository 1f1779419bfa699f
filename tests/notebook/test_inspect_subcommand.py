"""``%agent inspect``: what the agent sent, in every front-end."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from jupyter_brain.providers.scripted import ScriptedProvider

SECRET = "sk-proj-" + "Z" * 40


def agent(sh, line, cell):
    sh.run_cell_magic("agent", line, cell)
    return sh.user_ns["_agent"]


def test_inspect_shows_each_part_with_tokens(shell, capsys):
    shell.user_ns["sales"] = [1, 2, 3]
    shell.user_ns["bot"] = ScriptedProvider([
        {"text": "", "tool_calls": [{"name": "list_variables", "arguments": {}}]},
        "first answer",
    ])
    agent(shell, "--provider bot", "what do I have?")
    shell.user_ns["bot"] = ScriptedProvider(["second answer"])
    agent(shell, "--provider bot", "and now?")
    capsys.readouterr()

    shell.run_line_magic("agent", "inspect")
    out = capsys.readouterr().out
    assert "System prompt" in out and "Workspace" in out and "History" in out and "Tools" in out
    assert "and now?" in out  # the last turn's request
    assert "sales" in out  # the workspace as rendered for that request
    assert "tokens" in out

    shell.run_line_magic("agent", "inspect 1")
    first = capsys.readouterr().out
    assert "what do I have?" in first and "and now?" not in first
    assert "list_variables" in first  # the tool call in the history of step 2


def test_inspect_masks_keys_and_rejects_bad_turns(shell, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    shell.user_ns["note"] = f"my key is {SECRET}"
    shell.user_ns["bot"] = ScriptedProvider(["ok"])
    agent(shell, "--provider bot", "hi")
    capsys.readouterr()
    shell.run_line_magic("agent", "inspect --full")
    out = capsys.readouterr().out
    assert SECRET not in out
    with pytest.raises(UsageError, match="no turn '9'"):
        shell.run_line_magic("agent", "inspect 9")
    with pytest.raises(UsageError, match="TURN is a turn number"):
        shell.run_line_magic("agent", "inspect --bogus")


def test_inspect_without_turns_says_so(shell):
    with pytest.raises(UsageError, match="no turns yet"):
        shell.run_line_magic("agent", "inspect")
