"""Context compaction as a person sees it in JupyterLab: the context-level marker and the
"History compacted" marker appear in the turn where they happened."""

from __future__ import annotations

import pytest

from .conftest import open_and_run, screenshot, wait_idle_after_run, write_notebook

pytestmark = pytest.mark.browser

SETUP = '''%load_ext jupyter_brain
import tempfile
from jupyter_brain import ScriptedProvider
%config AgentMagics.data_dir = tempfile.mkdtemp()
%config AgentMagics.permission = "auto"
rows = " ".join(f"row{i}={i * 37 % 101}" for i in range(220))
def cell(n):
    calls = [{"text": f"Reading part {i}.", "tool_calls": [{"name": "run_python", "arguments": {"code": f"print('{n}.{i}', rows)"}}]}
             for i in range(4)]
    return [*calls, f"Cell {n} done."]
bot = ScriptedProvider([*cell(1), *cell(2)], summaries=["Earlier: parts 1.0-1.3 were read; nothing unusual."])'''

AGENT = "%%agent --provider bot --context-budget 6000 --compaction summary\nRead the parts."


def test_compaction_marker_and_context_level_show_in_the_turn(lab, page):
    base, root = lab
    write_notebook(root, "context.ipynb", [SETUP, AGENT, AGENT, "print(_agent.status)"])
    open_and_run(page, base, "context.ipynb")
    wait_idle_after_run(page)
    # A locator, not the element seen while the turn ran: a finished turn re-publishes its
    # output, and the view is drawn anew.
    marker = page.locator(".jb-compaction").first
    for summary in page.locator(".jb-process-summary").all():  # #13: finished turns' steps are folded
        summary.click()
    text = marker.inner_text()
    assert text.startswith("History compacted (summary):") and "of a 6,000 budget" in text, text
    levels = page.evaluate("() => [...document.querySelectorAll('.jb-context')].map(e => e.textContent)")
    assert any(t.startswith("Context warning:") for t in levels), levels
    assert page.evaluate("() => document.querySelectorAll('.jb-turn-end.jb-status-completed').length") == 2
    marker.scroll_into_view_if_needed()
    screenshot(page, "compaction_marker")
