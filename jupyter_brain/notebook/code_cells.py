"""``--cells``: the code the agent ran, put into the notebook as an ordinary cell.

Without the JupyterLab extension the portable way is IPython's ``set_next_input``: one
new cell below the ``%%agent`` cell holding every successful ``run_python`` call of the
turn, in order, so Run All reproduces the analysis without the agent. Front-ends that
cannot insert cells (terminal IPython prefills the next prompt; nbconvert ignores it)
lose nothing: the code is also in the transcript and in ``_agent.tool_calls``.
"""

from __future__ import annotations

from typing import Any

CODE_TOOL = "run_python"


def ran_code(result: Any) -> list[str]:
    """The code of the turn's ``run_python`` calls that ran without error, in order."""
    code: list[str] = []
    for call in result.tool_calls:
        if call.name != CODE_TOOL or call.status != "ok":
            continue
        args = call.arguments if isinstance(call.arguments, dict) else {}
        text = str(args.get("code") or "").strip("\n")
        if text.strip():
            code.append(text)
    return code


def code_cell_text(result: Any, prompt: str) -> str:
    """One cell: a comment saying where it came from, then each piece of code."""
    first_line = " ".join(prompt.strip().splitlines()[0].split())[:80] if prompt.strip() else ""
    header = (f"# Code the agent ran for: {first_line}\n"
              f"# (session {result.session_id}, turn {result.turn_id}; %%agent --cells)")
    return "\n\n".join([header, *ran_code(result)]) + "\n"


def insert_code_cell(shell: Any, result: Any, prompt: str) -> bool:
    """Put the turn's code into a new cell below; False (and a note) when none ran."""
    if not ran_code(result):
        print("--cells: the agent ran no code this turn, so no cell was added.")
        return False
    if shell is None:
        return False
    shell.set_next_input(code_cell_text(result, prompt), replace=False)
    return True
