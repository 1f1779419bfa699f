"""The notebook workspace sections (variables, files, recent cells): fresh per request
and never part of history (the Workspace renderer itself: tests/agent/test_workspace.py)."""

from __future__ import annotations

import pytest

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.tools.workspace_context import (
    directory_section,
    notebook_workspace,
    recent_cells_section,
    variables_section,
)


def test_variables_section_lists_types_and_shapes_without_callables() -> None:
    pd = pytest.importorskip("pandas")
    ns = {"sales": pd.DataFrame({"month": ["Jan"], "revenue": [1.0]}), "n": 3, "_private": 1, "f": len}
    text = variables_section(ns)
    assert "- sales: DataFrame — 1 rows × 2 cols: month" in text
    assert "- n: int — 3" in text
    assert "_private" not in text and "1 functions/classes not listed" in text


def test_directory_section_is_sorted_and_hides_private_folders(tmp_path) -> None:
    (tmp_path / "b.csv").write_text("x" * 2048)
    (tmp_path / "a.txt").write_text("hi")
    (tmp_path / "data").mkdir()
    (tmp_path / "analysis.ipynb").write_text("{}" * 100)
    (tmp_path / ".jupyter_brain").mkdir()
    (tmp_path / ".env").write_text("SECRET=1")
    text = directory_section(tmp_path)
    lines = text.splitlines()
    assert lines[0].endswith("— 3 files, 1 folder")
    assert [line.split()[0] for line in lines[1:]] == ["data/", "a.txt", "analysis.ipynb", "b.csv"]
    assert "  analysis.ipynb" in lines and "  b.csv  2.0 KB" in lines  # notebooks: no size (autosave)
    assert ".env" not in text and ".jupyter_brain" not in text


def test_recent_cells_skip_agent_cells_and_clip_long_ones() -> None:
    long_cell = "\n".join(f"x{i} = {i}" for i in range(20))
    history = ["", "import pandas as pd", long_cell, "get_ipython().run_cell_magic('agent', '', 'hi')", "df = pd.read_csv('a')"]
    text = recent_cells_section({"In": history}, count=2)
    assert "In [2]:" in text and "In [4]:" in text and "In [1]:" not in text
    assert "run_cell_magic" not in text
    assert "# … 8 more lines" in text


def test_notebook_workspace_is_fresh_per_request_and_never_in_history(tmp_path) -> None:
    ns: dict = {"In": [""]}

    @tool(effect="read")
    def make_var() -> str:
        """Create a variable."""
        ns["created"] = [1, 2, 3]
        return "done"

    provider = ScriptedProvider([{"tool_calls": [{"name": "make_var", "arguments": {}}]}, "ok"])
    harness = AgentHarness(provider, AgentToolRegistry([make_var]), EventLog(":memory:"),
                           workspace=notebook_workspace(ns, tmp_path))
    result = harness.run_turn("s", [], "go")
    first, second = (next(m for m in c["messages"] if m.get("kind") == "workspace") for c in provider.calls)
    assert "created" not in first["content"]
    assert "- created: list — len 3" in second["content"]
    assert all(m.get("kind") != "workspace" for m in result.messages)
