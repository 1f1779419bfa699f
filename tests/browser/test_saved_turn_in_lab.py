"""#24 §4 in JupyterLab: a finished %%agent turn is data, drawn by the extension.

Once the turn ends the live widget is gone and the extension's renderer of
``application/vnd.jupyter-brain.turn+json`` shows the same view; the saved file holds that
bundle (no widget, no view code), a re-run leaves one output, and the reopened notebook
shows the turn drawn the same way from the file, figure and dollars too.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from .conftest import open_and_run, open_notebook, run_command, screenshot, wait_idle_after_run, write_notebook

pytestmark = pytest.mark.browser

TURN_MIME = "application/vnd.jupyter-brain.turn+json"

SETUP = '''%load_ext jupyter_brain
%matplotlib inline
import pandas as pd
from jupyter_brain import ScriptedProvider
%config AgentMagics.permission = "auto"
code = ("sales = pd.DataFrame({'month': ['Jan', 'Feb'], 'revenue': [120, 90]})\\n"
        "sales.plot(x='month', y='revenue')")
bot = ScriptedProvider([
    {"text": "Plotting.", "tool_calls": [{"name": "run_python", "arguments": {"code": code}}]},
    "Revenue fell from $57,100 to $44,900 in **February**.",
] * 2)
'''

AGENT = '''%%agent --provider bot
Plot the revenue.'''


def _save(page) -> None:
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")


def test_finished_turn_is_drawn_by_the_extension_and_saved_as_data(lab, page):
    base, root = lab
    path = write_notebook(root, "saved_turn.ipynb", [SETUP, AGENT])
    open_and_run(page, base, "saved_turn.ipynb")
    wait_idle_after_run(page)
    output = page.locator(".jb-turn-output .jb-agent-view").first
    # Waits, not reads: on a loaded machine JupyterLab swaps the live widget for the drawn
    # turn a moment after the kernel is idle.
    expect(output).to_contain_text("fell from $57,100 to $44,900")
    expect(output.locator("img.jb-tool-image")).to_have_count(1)  # the figure, from the Markdown's bytes
    expect(page.locator(".jp-OutputArea-output .jb-agent-view")).to_have_count(1)  # the live widget is gone
    assert output.locator("mjx-container").count() == 0
    # Re-run the agent cell: still one view in its output.
    page.evaluate("() => window.jupyterapp.shell.currentWidget.content.activeCellIndex = 1")
    run_command(page, "notebook:run-cell")
    wait_idle_after_run(page)
    page.locator(".jb-turn-output .jb-agent-view").first.wait_for()
    expect(page.locator(".jp-OutputArea-output .jb-agent-view")).to_have_count(1)
    screenshot(page, "saved_turn_live")
    _save(page)
    nb = json.loads(path.read_text())
    (out,) = nb["cells"][1]["outputs"]
    assert TURN_MIME in out["data"] and "application/vnd.jupyter.widget-view+json" not in out["data"]
    assert json.dumps(nb).count("iVBORw0KGgo") == 1  # the figure, once
    assert len(path.read_bytes()) < 60_000  # setup, two turns' transcripts and one small figure
    # Reopened from the file: the extension draws the saved turn (not the Markdown); the
    # outputs come from the file, so no kernel needs to be ready for them.
    page.goto(f"{base}/lab/tree/saved_turn.ipynb?reset")
    view = page.locator(".jb-turn-output .jb-agent-view").first
    view.wait_for()
    assert "fell from $57,100 to $44,900" in view.inner_text()
    assert view.locator("img.jb-tool-image").count() == 1
    assert page.locator(".jp-OutputArea-output", has_text="Agent — Turn").count() == 0  # no fallback shown
    screenshot(page, "saved_turn_reopened")


def test_markdown_fallback_shows_dollars_not_math(lab, page):
    """The fallback's dollars (``<span>&#36;</span>``) through JupyterLab's own Markdown
    renderer and MathJax, in an untrusted notebook: amounts, not typeset math."""
    from jupyter_brain.widgets._format import escape_dollars

    base, root = lab
    path = write_notebook(root, "dollars.ipynb", ["print('saved output below')"])
    nb = json.loads(path.read_text())
    markdown = escape_dollars("Revenue fell from $57,100 to $44,900; `$x` stays code.\n\n**Cost $0.0123**")
    markdown += "\n\nA control that is math: $x^2$"  # typeset: MathJax has run once it shows
    nb["cells"][0]["outputs"] = [{"output_type": "display_data", "metadata": {}, "data": {"text/markdown": markdown}}]
    path.write_text(json.dumps(nb))
    open_notebook(page, base, "dollars.ipynb")
    output = page.locator(".jp-RenderedMarkdown", has_text="Revenue fell").first
    output.wait_for()
    output.locator("mjx-container").first.wait_for()  # the control is typeset: MathJax is done
    text = output.inner_text()
    assert "Revenue fell from $57,100 to $44,900;" in text and "Cost $0.0123" in text
    assert output.locator("code", has_text="$x").count() == 1
    assert output.locator("mjx-container").count() == 1  # the control only
