"""``%agent config``: keys, types and allowed values from the settings table."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from jupyter_brain.providers.scripted import ScriptedProvider


def _magics(shell):
    return shell.magics_manager.registry["AgentMagics"]


def test_zero_context_budget_means_the_models_window_again(shell, capsys) -> None:
    shell.run_line_magic("agent", "config context_budget=5000")
    assert _magics(shell).context_budget == 5000
    shell.run_line_magic("agent", "config context_budget=0")
    assert _magics(shell).context_budget == 0
    assert "context_budget=0" in capsys.readouterr().out
    shell.user_ns["bot"] = ScriptedProvider(["ok"])
    shell.run_cell_magic("agent", "--provider bot", "q")
    harness = _magics(shell).manager.current.last_harness
    assert harness.context_budget == harness.context_window


def test_values_are_typed_and_spelled_as_the_settings_write_them(shell, capsys) -> None:
    shell.run_line_magic("agent", "config stream=off auto-compact=yes strategy=Chain-of-Thought model=none")
    magics = _magics(shell)
    assert (magics.stream, magics.auto_compact, magics.strategy, magics.model) == (False, True, "cot", None)
    with pytest.raises(UsageError, match="unknown strategy 'magic'"):
        shell.run_line_magic("agent", "config strategy=magic")
    assert magics.strategy == "cot"  # a bad value changes nothing


def test_compare_reports_an_invalid_setting_as_its_own(shell) -> None:
    shell.user_ns["bot"] = ScriptedProvider(["ok"])
    with pytest.raises(UsageError, match=r"^%%compare: invalid setting: max_steps"):
        shell.run_cell_magic("compare", "--provider bot --strategies react --max-steps 500", "q")
