"""``%agent hooks``: a hook defined in a notebook cell, attached with ``%agent hooks add``,
blocks a tool and adds a context layer in the next ``%%agent`` cells (in-process IPython)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.error import UsageError

from jupyter_brain.notebook.user_tools import USER_TOOLS
from jupyter_brain.providers.scripted import ScriptedProvider

HOOK_CELL = '''
import jupyter_brain
from jupyter_brain.agent.hooks import ContextLayer, TurnHook

@jupyter_brain.tool(effect="write")
def drop_table(name: str) -> str:
    """Drop a table."""
    return f"dropped {name}"

class Guard(TurnHook):
    """No table is dropped from this notebook; every request says which data is in use."""

    def prepare_tools(self, ctx, offer):
        offer.blocked["drop_table"] = "the notebook's guard hook forbids it"
        return offer

    def context_layers(self, ctx):
        return [ContextLayer.fixed("hook", "The data in use is sales_2024.csv.")]

guard = Guard()
'''


@pytest.fixture(autouse=True)
def no_user_tool_left() -> Iterator[None]:
    yield
    USER_TOOLS.pop("drop_table", None)  # @jupyter_brain.tool registers for the whole kernel


def agent(sh: Any, line: str, cell: str) -> Any:
    return sh.run_cell_magic("agent", line, cell)


def test_a_hook_from_a_cell_blocks_a_tool_and_adds_a_layer(shell, capsys) -> None:
    assert shell.run_cell(HOOK_CELL).success
    shell.run_line_magic("agent", "hooks add guard")
    bot = ScriptedProvider([
        {"text": "", "tool_calls": [{"id": "d1", "name": "drop_table", "arguments": {"name": "sales"}}]},
        "I did not drop it.",
    ])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot --permission auto", "Drop the sales table.")
    result = shell.user_ns["_agent"]

    assert "drop_table" not in [t["name"] for t in bot.calls[0]["tools"]]
    assert [c.status for c in result.tool_calls] == ["blocked"] and result.status == "completed"
    for request in bot.calls:
        assert {"role": "system", "content": "The data in use is sales_2024.csv.", "kind": "hook"} in request["messages"]
    shell.run_line_magic("agent", "hooks")
    assert "guard  Guard" in capsys.readouterr().out

    shell.run_line_magic("agent", "hooks remove guard")
    again = ScriptedProvider(["ok"])
    shell.user_ns["bot"] = again
    agent(shell, "--provider bot", "Anything else?")
    assert "drop_table" in [t["name"] for t in again.calls[0]["tools"]]
    assert not any(m.get("kind") == "hook" for m in again.calls[0]["messages"])


def test_a_hook_class_is_made_and_a_non_hook_is_refused(shell) -> None:
    assert shell.run_cell(HOOK_CELL).success
    shell.run_line_magic("agent", "hooks add Guard")
    magics = shell.magics_manager.registry["AgentMagics"]
    assert type(magics.hooks["Guard"]).__name__ == "Guard"
    shell.user_ns["not_a_hook"] = 42
    with pytest.raises(UsageError, match="TurnHook or an Integration"):
        shell.run_line_magic("agent", "hooks add not_a_hook")
    with pytest.raises(UsageError, match="no variable named 'missing'"):
        shell.run_line_magic("agent", "hooks add missing")
    shell.run_line_magic("agent", "hooks clear")
    assert magics.hooks == {}
