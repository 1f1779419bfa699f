"""Approval cards in real JupyterLab: the %%agent cell is still executing when the card
appears, a click on Approve / Deny reaches the waiting kernel, the tool runs (or the
model hears the denial), and cells queued meanwhile run afterwards."""

from __future__ import annotations

import pytest

from .conftest import open_and_run, screenshot, wait_idle_after_run, write_notebook

pytestmark = pytest.mark.browser

SETUP = """%load_ext jupyter_brain
import tempfile
from jupyter_brain.providers.scripted import ScriptedProvider
%config AgentMagics.data_dir = tempfile.mkdtemp()
%config AgentMagics.permission = "ask"
Path = __import__("pathlib").Path
bot = ScriptedProvider([
    {"text": "I will write the report and then run a check.",
     "tool_calls": [{"name": "write_file", "arguments": {"path": "report.md", "content": "# Report\\nrevenue fell in March\\n"}}]},
    {"text": "Now the check.", "tool_calls": [{"name": "run_python", "arguments": {"code": "denied_marker = 1"}}]},
    "Report written; the check was not allowed.",
])"""

AGENT = "%%agent --provider bot\nWrite the report."

CHECK = "print('report:', Path('report.md').read_text().splitlines()[0], '| ran:', 'denied_marker' in globals())"

CARD_STATE = """() => [...document.querySelectorAll('.jb-approval')].map(c => ({
  tool: c.querySelector('.jb-approval-tool').textContent,
  cls: c.className,
  status: c.querySelector('.jb-approval-status').textContent,
  diff: [...c.querySelectorAll('.jb-diff-add')].map(e => e.textContent),
}))"""


def test_approve_and_deny_cards_while_the_cell_runs(lab, page):
    base, root = lab
    write_notebook(root, "approval.ipynb", [SETUP, AGENT, CHECK])
    open_and_run(page, base, "approval.ipynb")

    first = page.wait_for_selector(".jb-approval.jb-pending")
    # The %%agent cell is still executing while the card waits (its prompt shows [*]).
    prompts = page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.widgets.map(c => c.promptNode ? c.promptNode.textContent : '')")
    assert "*" in prompts[1], prompts
    state = page.evaluate(CARD_STATE)
    assert state[0]["tool"] == "write_file"
    assert "+# Report\n" in state[0]["diff"] and "+revenue fell in March\n" in state[0]["diff"], state
    first.scroll_into_view_if_needed()
    screenshot(page, "approval_card_pending")
    page.click(".jb-approval.jb-pending .jb-approve")

    page.wait_for_selector(".jb-approval.jb-approved")
    second = page.wait_for_selector(".jb-approval.jb-pending")
    assert page.evaluate(CARD_STATE)[1]["tool"] == "run_python"
    second.scroll_into_view_if_needed()
    page.click(".jb-approval.jb-pending .jb-deny")
    page.wait_for_selector(".jb-approval.jb-denied")

    wait_idle_after_run(page)
    page.wait_for_selector(".jb-turn-end")
    final = page.evaluate(CARD_STATE)
    assert [c["status"] for c in final] == [
        "✓ Approved in the widget (by you)",
        "✗ Denied in the widget (by you)",
    ]
    # The queued cell ran after the turn: the file exists, the denied code never ran.
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-OutputArea-output')].some(o => o.textContent.includes('report: # Report'))",
    )
    outputs = page.evaluate("() => [...document.querySelectorAll('.jp-OutputArea-output')].map(o => o.textContent)")
    assert any("report: # Report" in o and o.strip().endswith("| ran: False") for o in outputs), outputs
    assert (root / "report.md").read_text().startswith("# Report")
    page.locator(".jb-approval").first.scroll_into_view_if_needed()
    screenshot(page, "approval_cards_decided")
