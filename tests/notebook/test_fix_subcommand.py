"""``%agent fix``: a failing cell, the agent's corrected cell as a diff, ``--apply``."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from jupyter_brain.notebook.cell_errors import CellErrors
from jupyter_brain.notebook.fix import proposed_code, touched_variables
from jupyter_brain.providers.scripted import ScriptedProvider

FAILING = "count = 0\naverage = sum(data) / count\n"
FIXED_ANSWER = ("`count` is zero, so the division fails.\n\n"
                "```python\ncount = len(data)\naverage = sum(data) / count\n```")


def test_fix_sends_source_traceback_and_variables_and_shows_a_diff(shell, capsys):
    shell.user_ns["data"] = [2, 4, 6]
    shell.run_cell(FAILING, store_history=True)
    seen = []

    def answer(messages, tools):
        seen.append("\n".join(str(m.get("content")) for m in messages if m.get("role") == "user"))
        return FIXED_ANSWER

    shell.user_ns["bot"] = ScriptedProvider([answer])
    shell.run_line_magic("config", 'AgentMagics.provider = "bot"')
    capsys.readouterr()
    shell.run_line_magic("agent", "fix")
    out = capsys.readouterr().out
    prompt = seen[0]
    assert "average = sum(data) / count" in prompt
    assert "ZeroDivisionError" in prompt and "division by zero" in prompt
    assert "- data (list): len 3" in prompt  # the variables the cell touches
    assert "interactiveshell" not in prompt  # IPython's own frames are not the user's problem
    assert "-count = 0" in out and "+count = len(data)" in out
    assert "%agent fix --apply" in out

    shell.rl_next_input = None
    shell.run_line_magic("agent", "fix --apply")
    assert shell.rl_next_input == "count = len(data)\naverage = sum(data) / count\n"
    ns = {"data": [2, 4, 6]}
    exec(shell.rl_next_input, ns)
    assert ns["average"] == 4


def test_fix_a_given_cell_keeps_braces_in_code(shell, capsys):
    shell.run_cell("d = {'a': 1}\nd['b']", store_history=True)
    failing = shell.execution_count - 1
    shell.run_cell("ok = 1", store_history=True)
    seen = []

    def answer(messages, tools):
        seen.append(messages[-1]["content"])
        return "Missing key.\n```python\nd = {'a': 1}\nd.get('b')\n```"

    shell.user_ns["bot"] = ScriptedProvider([answer])
    shell.run_line_magic("config", 'AgentMagics.provider = "bot"')
    shell.run_line_magic("agent", f"fix {failing}")
    assert "d = {'a': 1}" in seen[0]  # not treated as {name} interpolation
    assert "KeyError" in seen[0]
    assert "+d.get('b')" in capsys.readouterr().out


def test_fix_errors_are_clear(shell, capsys):
    with pytest.raises(UsageError, match="no cell has failed"):
        shell.run_line_magic("agent", "fix")
    with pytest.raises(UsageError, match="no proposed fix yet"):
        shell.run_line_magic("agent", "fix --apply")
    with pytest.raises(UsageError, match="unknown argument"):
        shell.run_line_magic("agent", "fix --now")
    shell.run_cell("1/0")
    with pytest.raises(UsageError, match="has no recorded error"):
        shell.run_line_magic("agent", "fix 999")
    shell.user_ns["bot"] = ScriptedProvider(["I cannot tell."])
    shell.run_line_magic("config", 'AgentMagics.provider = "bot"')
    capsys.readouterr()
    shell.run_line_magic("agent", "fix")
    assert "did not propose a corrected cell" in capsys.readouterr().out


def test_agent_cells_and_unloading():
    errors = CellErrors()

    class Info:
        raw_cell = "%%agent\nfix it"

    class Result:
        error_in_exec = ValueError("x")
        info = Info()
        execution_count = 3

    errors(Result())
    assert errors.latest() is None  # an agent cell's own failure is not a cell to fix


def test_helpers():
    assert proposed_code("a\n```python\nx = 1\n```\nand\n```python\ny = 2\n```") == "y = 2\n"
    assert proposed_code("no code") is None
    assert touched_variables("z = a + b(c)\nprint(a)", {"a": 1, "b": len, "c": [1], "z": 0}) == ["z", "a", "c"]
