"""The real Claude Code CLI in the notebook a user has open in JupyterLab (issue #35): its
model (scripted) inserts a cell that uses a variable the user's tab made, and runs it, so it
runs in the tab's own kernel; the tab, reloaded from disk, shows the cell and its output
(the endpoint writes its unsaved edits before the server hands the file out), and the variable
is in the tab's kernel. Screenshot: claude_code_in_lab.png."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from ..engines.scripted_claude import ScriptedClaude, text, tool_use
from ..server.test_claude_code_cli import claude_bin, run_claude
from .conftest import (
    endpoint_of,
    kernel_output,
    open_notebook,
    run_cell,
    screenshot,
    serve_endpoint_lab,
    wait_idle_after_run,
    write_notebook,
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def mcp_lab(tmp_path_factory):
    """A JupyterLab of its own with the endpoint on and ``permission`` auto, no autosave (a tab's
    autosave would race the agent's edits: JupyterLab's model does not hold them)."""
    claude_bin()
    yield from serve_endpoint_lab(tmp_path_factory, "mcp-lab", "--JupyterBrainMCP.permission=auto", autosave=False)


def test_claude_code_works_in_the_open_notebooks_kernel(mcp_lab, page, tmp_path) -> None:
    base, root = mcp_lab.base, mcp_lab.root
    write_notebook(root, "with_claude.ipynb", ["base = 20"])
    open_notebook(page, base, "with_claude.ipynb")
    run_cell(page, 0)
    wait_idle_after_run(page)

    source = "answer = base * 2 + 2\nprint('answer', answer)"
    model = ScriptedClaude().push(
        [text("Adding it."), tool_use("mcp__jupyter__insert_cell", {"path": "with_claude.ipynb", "source": source}, "t1")],
        [tool_use("mcp__jupyter__execute_cell", {"path": "with_claude.ipynb", "index": -1}, "t2")],
        [text("It printed answer 42.")],
    )
    try:
        done = run_claude(endpoint_of(mcp_lab), model, "Compute the answer from base and run it.",
                          ["mcp__jupyter__insert_cell", "mcp__jupyter__execute_cell"], tmp_path)
    finally:
        model.stop()
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    assert "answer 42" in json.loads(done.stdout)["result"]

    assert kernel_output(page, "print(answer)") == "42\n"  # it ran in the tab's kernel, after the tab's cell
    page.evaluate("() => window.jupyterapp.shell.currentWidget.context.revert()")  # File → Reload from Disk
    cells = page.locator(".jp-Notebook .jp-Cell")
    page.wait_for_function("() => document.querySelectorAll('.jp-Notebook .jp-Cell').length === 2")
    expect(cells.nth(1).locator(".jp-OutputArea")).to_contain_text("answer 42")  # rendered a moment after
    expect(cells.nth(1).locator(".jp-InputArea")).to_contain_text("answer = base * 2 + 2")
    screenshot(page, "claude_code_in_lab")
