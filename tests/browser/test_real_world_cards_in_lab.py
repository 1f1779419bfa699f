"""What #12 and #17 added to a turn, as a person sees it in JupyterLab: the figure the
agent's code made inside that tool's row, the thinking-phase card (folded), and a refusal
shown as a refusal, not as an empty "completed" answer."""

from __future__ import annotations

import pytest

from .conftest import open_and_run, screenshot, wait_idle_after_run, write_notebook

pytestmark = pytest.mark.browser

SETUP = '''%load_ext jupyter_brain
%matplotlib inline
import tempfile
from jupyter_brain import ScriptedProvider, ProviderResult
%config AgentMagics.data_dir = tempfile.mkdtemp()
%config AgentMagics.permission = "auto"
plot = ("import matplotlib.pyplot as plt\\n"
        "fig, ax = plt.subplots(figsize=(4, 2.5))\\n"
        "ax.plot(['Jan', 'Feb', 'Mar'], [120, 135, 90], marker='o')\\n"
        "ax.set_title('Revenue')")
bot = ScriptedProvider([
    {"text": "Plotting revenue.", "tool_calls": [{"name": "run_python", "arguments": {"code": plot}}]},
    {"text": "Checking the drop.", "tool_calls": [{"name": "run_python", "arguments": {"code": "print('Note: March fell by 45.')"}}]},
    "**March** had the largest drop (-45).",
])
refuser = ScriptedProvider([ProviderResult(text="", stop_reason="refusal", refusal="I can't help with that request.")])'''

PLOT = "%%agent --provider bot --thinking-phase token_budget --max-steps 4\nWhich month dropped most? Plot it."
REFUSE = "%%agent --provider refuser\nSomething the model declines."


def test_figure_thinking_phase_and_refusal_show_in_the_turn(lab, page):
    base, root = lab
    write_notebook(root, "real_world.ipynb", [SETUP, PLOT, REFUSE, "print(_agent.status)"])
    open_and_run(page, base, "real_world.ipynb")
    page.wait_for_selector(".jb-refusal")
    wait_idle_after_run(page)
    images = page.evaluate("() => [...document.querySelectorAll('.jb-tool-image')].map(i => i.src.slice(0, 22))")
    assert images and all(src.startswith("data:image/png;base64") for src in images), images
    page.locator(".jb-process-summary").first.click()  # #13: the finished turn's steps are folded
    card = page.query_selector("details.jb-thinking-phase")
    assert card is not None and not card.evaluate("d => d.open")
    assert "tokens saved" in card.inner_text()
    refusal = page.query_selector(".jb-refusal").inner_text()
    assert "I can't help with that request." in refusal, refusal
    statuses = page.evaluate("() => [...document.querySelectorAll('.jb-turn-end')].map(e => e.className)")
    assert any("jb-status-completed" in s for s in statuses) and any("jb-status-refused" in s for s in statuses)
    page.query_selector(".jb-tool-image").scroll_into_view_if_needed()
    screenshot(page, "figure_in_tool_row")
    page.query_selector(".jb-refusal").scroll_into_view_if_needed()
    screenshot(page, "refusal_card")
