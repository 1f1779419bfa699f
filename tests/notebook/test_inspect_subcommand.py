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


def test_inspect_shows_what_outside_agents_did_here_next_to_the_turns(shell, tmp_path, capsys):
    """Issue #35: the MCP endpoint's calls (written by the server into the event log of the
    notebook's folder, which is this kernel's) grouped by session, arguments masked."""
    from jupyter_brain.server.audit import AuditTrail
    from jupyter_brain.server.gate import OutsideSession

    trail = AuditTrail()
    claude, codex = OutsideSession("aaaaaa111111", "claude-code"), OutsideSession("bbbbbb222222", "codex")
    trail.record(tmp_path, claude, "insert_cell", {"path": "a.ipynb", "index": 1, "source": f"key = '{SECRET}'"},
                 {"allowed": True, "how": "approved", "approved_by": "alice"}, "ok",
                 "Inserted a code cell at index 1 (id c1)", 0.02)
    trail.record(tmp_path, claude, "execute_cell", {"path": "a.ipynb", "index": 1},
                 {"allowed": False, "how": "denied", "denied": True, "denied_by": "alice"}, "refused",
                 "execute_cell denied: the user (alice) denied this call", 0.0)
    trail.record(tmp_path, codex, "read_notebook", {"path": "a.ipynb"}, {"allowed": True, "how": "read"}, "ok",
                 "2 cells", 0.01)
    trail.close()

    shell.run_line_magic("agent", "inspect")  # no turn yet: the outside agents' sessions
    out = capsys.readouterr().out
    assert "outside agents (MCP endpoint): 2 sessions, 3 calls" in out
    assert "session aaaaaa · claude-code" in out and "3 calls" not in out.split("session aaaaaa")[1].split("\n")[0]
    assert "(1 approved by alice, 1 denied by alice)" in out
    assert "insert_cell a.ipynb #1 · approved by alice · ok" in out
    assert "execute_cell a.ipynb #1 · denied by alice · refused" in out
    assert "session bbbbbb · codex" in out and "read_notebook a.ipynb · read · ok" in out
    assert "result: Inserted a code cell at index 1 (id c1)" in out
    assert SECRET not in out

    shell.user_ns["bot"] = ScriptedProvider(["ok"])
    agent(shell, "--provider bot", "hi")
    capsys.readouterr()
    shell.run_line_magic("agent", "inspect")  # the turn's request, then where to look for the others
    out = capsys.readouterr().out
    assert "System prompt" in out
    assert "outside agents worked here too: 3 calls in 2 MCP sessions (%agent inspect outside)" in out
    shell.run_line_magic("agent", "inspect outside")
    assert "2 sessions, 3 calls" in capsys.readouterr().out
