"""``%%agent --cells``: the code the agent ran lands in a new cell below."""

from __future__ import annotations

from jupyter_brain.notebook.code_cells import code_cell_text, ran_code
from jupyter_brain.providers.scripted import ScriptedProvider


def run_python(code):
    return {"text": "", "tool_calls": [{"name": "run_python", "arguments": {"code": code}}]}


def test_cells_puts_the_successful_code_in_one_new_cell(shell, capsys):
    shell.user_ns["bot"] = ScriptedProvider([
        run_python("total = 1 + 2"),
        run_python("1 / 0"),  # fails: not part of a reproducible analysis
        run_python("double = total * 2\nprint(double)"),
        "double is 6",
    ])
    shell.rl_next_input = None
    shell.run_cell_magic("agent", "--provider bot --permission auto --cells --max-steps 5", "compute double")
    cell = shell.rl_next_input  # set_next_input's target in a terminal-style shell
    assert cell is not None
    assert "total = 1 + 2" in cell and "double = total * 2\nprint(double)" in cell
    assert "1 / 0" not in cell
    assert cell.index("total = 1 + 2") < cell.index("double = total * 2")
    result = shell.user_ns["_agent"]
    assert f"turn {result.turn_id}" in cell
    # the cell reproduces the analysis without the agent
    ns: dict = {}
    exec(compile(cell, "<cell>", "exec"), ns)
    assert ns["double"] == 6


def test_no_cell_without_the_flag_or_without_code(shell, capsys):
    shell.user_ns["bot"] = ScriptedProvider([run_python("x = 1"), "ok"])
    shell.rl_next_input = None
    shell.run_cell_magic("agent", "--provider bot --permission auto", "set x")
    assert shell.rl_next_input is None
    shell.user_ns["bot"] = ScriptedProvider(["just words"])
    shell.run_cell_magic("agent", "--provider bot --cells", "say something")
    assert shell.rl_next_input is None
    assert "ran no code" in capsys.readouterr().out


def test_kernel_default_turns_it_on(shell):
    shell.run_line_magic("config", "AgentMagics.cells = True")
    shell.user_ns["bot"] = ScriptedProvider([run_python("y = 5"), "ok"])
    shell.rl_next_input = None
    shell.run_cell_magic("agent", "--provider bot --permission auto", "set y")
    assert "y = 5" in (shell.rl_next_input or "")
    shell.user_ns["bot"] = ScriptedProvider([run_python("z = 1"), "ok"])
    shell.rl_next_input = None
    shell.run_cell_magic("agent", "--provider bot --permission auto --no-cells", "set z")
    assert shell.rl_next_input is None


def test_ran_code_skips_denied_and_other_tools():
    from jupyter_brain.agent.results import ToolCallRecord, TurnResult

    result = TurnResult(session_id="s", turn_id="t", status="completed", text="", tool_calls=[
        ToolCallRecord(call_id="1", name="run_python", arguments={"code": "a = 1"}, status="ok"),
        ToolCallRecord(call_id="2", name="run_python", arguments={"code": "rm()"}, status="denied"),
        ToolCallRecord(call_id="3", name="read_file", arguments={"path": "x"}, status="ok"),
    ])
    assert ran_code(result) == ["a = 1"]
    assert code_cell_text(result, "Do things\nmore").startswith("# Code the agent ran for: Do things\n")
