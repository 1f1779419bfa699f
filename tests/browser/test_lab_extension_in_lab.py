"""The JupyterLab extension (js/lab) in a real JupyterLab and Chromium.

The shared server runs from ``$JUPYTER_BRAIN_LAB_PYTHON`` when set: scripts/test.sh points
it at a fresh virtualenv where the *wheel* was installed (scripts/check_wheel.py), and these
notebooks use that environment's own kernel, so this checks what ``pip install
jupyter-brain`` gives. Without it, the test environment's own install (editable, with the
extension as shared data) is used. Screenshots:
test-artifacts/screenshots/lab_*.png.
"""

from __future__ import annotations

import os
import re

import pytest

from .conftest import (lab_trail, open_and_run, open_notebook, run_cell, screenshot, wait_idle_after_run,
                       write_notebook)

pytestmark = pytest.mark.browser

CELLS_SETUP = r'''%load_ext jupyter_brain
%config AgentMagics.replay = "off"
# (each re-run below asks the scripted model again: an unchanged re-run would replay)
from jupyter_brain import ScriptedProvider

def rounds(n):
    out = []
    for i in range(n):
        out += [
            {"text": "", "tool_calls": [{"name": "run_python", "arguments": {"code": f"nums = [3, 4, 5]\nprint('sum', sum(nums) + {i})"}}]},
            {"text": "", "tool_calls": [{"name": "run_python", "arguments": {"code": "total = sum(nums) * 2\ntotal"}}]},
            "The total is **24**.",
        ]
    return out

bot = ScriptedProvider(rounds(3))
'''

AGENT = '''%%agent --provider bot --permission auto --cells
# Task
Add up the **numbers** and double them.'''

FIX_SETUP = r'''%load_ext jupyter_brain
from jupyter_brain import ScriptedProvider
bot = ScriptedProvider(["Dividing by zero fails.\n\n```python\nx = 10\ny = x / 2\n```"])
%config AgentMagics.provider = "bot"
'''

FAILING = "x = 10\ny = x / 0"

JS_CELLS = """() => {
    const m = window.jupyterapp.shell.currentWidget.content.model;
    const out = [];
    for (let i = 0; i < m.cells.length; i++) {
        const c = m.cells.get(i);
        out.push({source: c.sharedModel.getSource(), meta: c.sharedModel.getMetadata().jupyter_brain || null,
                  outputs: c.type === 'code' ? c.sharedModel.outputs.length : 0});
    }
    return out;
}"""


@pytest.fixture()
def brain_lab(lab_server, lab):
    """(base_url, root_dir) of the shared JupyterLab, which must have the extension installed."""
    if not lab_server.extension_enabled():
        if os.environ.get("CI") or os.environ.get("JUPYTER_BRAIN_LAB_PYTHON"):
            pytest.fail(f"the jupyter-brain lab extension is not enabled for {lab_server.python}")
        pytest.skip("the lab extension is not built/installed here (scripts/test.sh builds it)")
    return lab


def _write(root, name: str, cells: list[str]) -> None:
    """A notebook on the server's own kernel: with $JUPYTER_BRAIN_LAB_PYTHON, the wheel's install."""
    write_notebook(root, name, cells, kernel="python3")


def _cells_after_run(page) -> list[dict]:
    """The notebook's cells once the run is over. The kernel sends a turn's cells before the
    cell's reply, and the extension inserts them on arrival (unless it asks first), so the
    count is final here: a missing cell fails now, with the cells in the message."""
    wait_idle_after_run(page)
    return page.evaluate(JS_CELLS)


def test_agent_cells_status_bar_highlighting_and_inspector(brain_lab, page):
    base, root = brain_lab
    _write(root, "lab_cells.ipynb", [CELLS_SETUP, AGENT, "after = 1"])
    open_and_run(page, base, "lab_cells.ipynb")
    cells = _cells_after_run(page)
    # One code cell per run_python call, right below the %%agent cell, marked, with outputs.
    if len(cells) != 5:  # spelled out: pytest would cut the cells and the trail short
        sources = "\n".join(f"  {c['source'][:60]!r} meta={c['meta']}" for c in cells)
        pytest.fail(f"{len(cells)} cells, not 5:\n{sources}\nthe kernel's channel to the extension:\n{lab_trail(page)}")
    assert cells[2]["source"] == "nums = [3, 4, 5]\nprint('sum', sum(nums) + 0)"
    assert cells[3]["source"] == "total = sum(nums) * 2\ntotal"
    assert cells[4]["source"] == "after = 1" and cells[4]["meta"] is None
    assert cells[2]["meta"]["session"] and cells[2]["meta"]["turn"] == cells[3]["meta"]["turn"]
    assert cells[2]["outputs"] >= 1 and cells[3]["outputs"] >= 1
    assert "sum 12" in page.locator(".jp-Cell").nth(2).locator(".jp-OutputArea").inner_text()
    screenshot(page, "lab_code_cells")

    # The status bar: session, tokens, cost, context level, pushed after the turn.
    item = page.locator(".jb-status-item")
    page.wait_for_function("document.querySelector('.jb-status-item').textContent.includes('tokens')")
    text = item.inner_text()
    session = cells[2]["meta"]["session"]
    assert re.search(rf"{re.escape(session)} · [\d.]+k? tokens · (\$[\d.]+|≈\$[\d.]+|cost n/a) · context ok \d+%",
                     text), text
    page.locator(".jp-StatusBar-Widget").screenshot(path=str(screenshot(page, "lab_status_bar")))
    item.click()
    dialog = page.locator(".jp-Dialog .jb-dialog-text")
    dialog.wait_for()
    assert f"session: {session}" in dialog.inner_text()
    screenshot(page, "lab_status_dialog")
    page.locator(".jp-Dialog button", has_text="Close").click()

    # The %%agent body is Markdown in the editor: the editor says so, and "# Task" is a
    # heading (bold), not a Python comment.
    agent_editor = page.locator(".jp-Cell").nth(1).locator(".cm-editor")
    assert agent_editor.get_attribute("data-jb-language") == "markdown"
    assert page.locator(".jp-Cell").nth(0).locator(".cm-editor").get_attribute("data-jb-language") is None
    heading = agent_editor.locator(".cm-line", has_text="# Task").locator("span").first
    assert heading.evaluate("e => getComputedStyle(e).fontWeight") in ("700", "bold")
    assert agent_editor.locator(".jb-magic-word").inner_text() == "%%agent"
    page.locator(".jp-Cell").nth(1).screenshot(path=str(screenshot(page, "lab_agent_highlight")))

    # Commands, with default shortcuts.
    bindings = page.evaluate("""() => window.jupyterapp.commands.keyBindings
        .filter(b => b.command.startsWith('jupyter-brain:')).map(b => b.command)""")
    assert {"jupyter-brain:insert-agent-cell", "jupyter-brain:fix-cell", "jupyter-brain:show-request"} <= set(bindings)

    # The inspector: the last request, one collapsible section per part with its tokens.
    page.evaluate("() => window.jupyterapp.commands.execute('jupyter-brain:show-request')")
    inspector = page.locator(".jb-inspector")
    inspector.wait_for()
    kinds = inspector.locator(":scope > details").evaluate_all("els => els.map(e => e.dataset.kind)")
    assert kinds[0] == "system" and "history" in kinds and kinds[-1] == "tools"
    summaries = inspector.locator(":scope > details > summary").all_inner_texts()
    assert all(re.search(r"[\d,]+ tokens", s) for s in summaries), summaries
    inspector.locator("details[data-kind='history'] > summary").click()
    assert "run_python" in inspector.locator("details[data-kind='history']").inner_text()
    screenshot(page, "lab_inspector")
    page.evaluate("() => window.jupyterapp.shell.activateById(document.querySelector('.jp-NotebookPanel').id)")
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.node.classList.contains('jp-NotebookPanel')")

    # Re-running the same %%agent cell replaces its cells instead of piling up more.
    run_cell(page, 1)
    cells = _cells_after_run(page)
    assert len(cells) == 5 and cells[2]["source"].endswith("+ 1)"), cells
    # After an edit of an inserted cell, a re-run asks first.
    page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.model.cells.get(3)
        .sharedModel.setSource('total = sum(nums) * 3  # mine\\ntotal')""")
    run_cell(page, 1)
    ask = page.locator(".jp-Dialog", has_text="Replace the cells the agent inserted last time?")
    ask.wait_for()
    screenshot(page, "lab_replace_dialog")
    ask.locator("button", has_text="Replace").click()
    # The answer applies the edit the dialog held back.
    page.wait_for_function("""() => window.jupyterapp.shell.currentWidget.content.model.cells.get(2)
        .sharedModel.getSource().includes('+ 2)')""")
    cells = _cells_after_run(page)
    assert len(cells) == 5, cells
    assert [c["source"] for c in cells[2:4]] == ["nums = [3, 4, 5]\nprint('sum', sum(nums) + 2)",
                                                 "total = sum(nums) * 2\ntotal"]

    # The cell context menu has the commands; "Insert agent cell below" starts a Markdown-
    # highlighted %%agent cell.
    page.locator(".jp-Cell").nth(4).locator(".jp-InputArea-prompt").click(button="right")
    menu = page.locator(".lm-Menu")
    menu.wait_for()
    labels = menu.locator(".lm-Menu-itemLabel").all_inner_texts()
    assert {"Insert agent cell below", "Fix the error in this cell", "Show what the agent sent"} <= set(labels)
    screenshot(page, "lab_context_menu")
    menu.locator(".lm-Menu-item", has_text="Insert agent cell below").click()
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.content.model.cells.length === 6")
    assert page.evaluate(JS_CELLS)[5]["source"] == "%%agent\n"
    editor = page.locator(".jp-Cell").nth(5).locator(".cm-editor")
    page.wait_for_function("() => document.querySelectorAll('.jp-Cell')[5]"
                           ".querySelector('.cm-editor').dataset.jbLanguage === 'markdown'")
    assert editor.get_attribute("data-jb-language") == "markdown"


def test_fix_with_agent_button_shows_a_diff_and_applies_it(brain_lab, page):
    base, root = brain_lab
    _write(root, "lab_fix.ipynb", [FIX_SETUP, FAILING])
    open_and_run(page, base, "lab_fix.ipynb")
    wait_idle_after_run(page)
    button = page.locator(".jp-Cell").nth(1).locator(".jb-fix-button")
    button.wait_for()
    assert "ZeroDivisionError" in page.locator(".jp-Cell").nth(1).locator(".jp-OutputArea").inner_text()
    assert page.locator(".jp-Cell").nth(0).locator(".jb-fix-button").count() == 0
    screenshot(page, "lab_fix_button")
    button.click()
    dialog = page.locator(".jp-Dialog", has_text="Proposed fix")
    dialog.wait_for()
    assert "ZeroDivisionError" in dialog.inner_text()
    assert dialog.locator(".jb-diff-del").inner_text().strip() == "-y = x / 0"
    assert dialog.locator(".jb-diff-add").inner_text().strip() == "+y = x / 2"
    screenshot(page, "lab_fix_diff")
    dialog.locator("button", has_text="Apply").click()
    page.wait_for_function("""() => window.jupyterapp.shell.currentWidget.content.model.cells.get(1)
        .sharedModel.getSource() === 'x = 10\\ny = x / 2\\n'""")
    assert page.evaluate("() => window.jupyterapp.shell.currentWidget.content.model.cells.length") == 2
    screenshot(page, "lab_fix_applied")


def test_after_a_page_reload_the_extension_reconnects_to_the_kernel(brain_lab, page):
    base, root = brain_lab
    _write(root, "lab_reload.ipynb", ["%load_ext jupyter_brain"])
    open_and_run(page, base, "lab_reload.ipynb")
    wait_idle_after_run(page)
    kernel_id = page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.id")
    # A reload drops the comm %load_ext opened; the extension opens one to the kernel's target.
    open_notebook(page, base, "lab_reload.ipynb", reset=False)
    assert page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.id") == kernel_id
    page.locator(".jb-status-item").click()
    dialog = page.locator(".jp-Dialog .jb-dialog-text")
    dialog.wait_for()
    assert "session: lab_reload" in dialog.inner_text()  # a kernel's session is named after its notebook
