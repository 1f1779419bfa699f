"""%%compare's loose ends (#27): a --check time limit, big variables shared instead of
copied (and --no-copy), the judge's verdicts recorded and replayed, its cost in %agent cost."""

from __future__ import annotations

from typing import Any

import numpy as np

from jupyter_brain.providers.scripted import ScriptedProvider

RIGHT = "Step 1: 6*7=42\nFinal Answer: 42"
ENDLESS = "sum(1 for _ in iter(int, 1))"


def compare(shell, line: str, cell: str = "What is 6*7?") -> Any:
    shell.run_cell_magic("compare", line, cell)
    return shell.user_ns["_compare"]


def test_an_endless_check_fails_as_timed_out_and_the_cell_goes_on(shell):
    shell.user_ns["bot"] = ScriptedProvider([RIGHT], repeat=True)
    result = compare(shell, f"--strategies cot --provider bot --check '{ENDLESS}' --check-timeout 0.3 --expect 42")
    (row,) = result.rows
    assert row["passed"] is False and row["reason"] == "check: timed out after 0.3 s"
    shell.run_line_magic("config", "AgentMagics.check_timeout = 0.2")  # the kernel's default
    again = compare(shell, f"--strategies cot --provider bot --check '{ENDLESS}'")
    assert again.rows[0]["reason"] == "check: timed out after 0.2 s"


def test_a_variable_over_the_limit_is_shared_read_only_with_a_note(shell, capsys):
    shell.run_cell("import numpy as np\narr = np.zeros(131072)\nsmall = [1, 2]")  # arr: 1 MB
    shell.run_line_magic("config", "AgentMagics.compare_copy_limit_mb = 0.5")
    shell.user_ns["bot"] = ScriptedProvider([RIGHT], repeat=True)
    result = compare(shell, "--strategies react,cot --provider bot --check 'not arr.flags.writeable'")
    out = capsys.readouterr().out
    assert ("note: not copied for each run, shared read-only: arr (1.0 MB), over "
            "AgentMagics.compare_copy_limit_mb = 0.5") in out
    assert [r["passed"] for r in result.rows] == [True, True]  # each run got a read-only view …
    assert np.shares_memory(result.namespace("cot")["arr"], shell.user_ns["arr"])  # … of the same data
    assert result.namespace("cot")["small"] is not shell.user_ns["small"]  # the small one is copied
    assert shell.user_ns["arr"].flags.writeable  # the user's own array is as it was


def test_no_copy_shares_every_variable_and_the_intact_check_still_reports(shell, capsys):
    shell.run_cell("kept = {'n': 1}")
    writes = "kept['n'] = 2"
    shell.user_ns["bot"] = ScriptedProvider([
        {"text": "Action: run_python", "tool_calls": [{"name": "run_python", "arguments": {"code": writes}}]},
        "Final Answer: done"])
    result = compare(shell, "--strategies react --provider bot --permission auto --no-copy")
    out = capsys.readouterr().out
    assert "note: --no-copy: the runs share your variables (bot, kept); a change one makes in place" in out
    assert shell.user_ns["kept"] == {"n": 2}  # shared: the run's change reached it
    assert result.namespace_changes == ["kept (changed)"]
