"""What a person sees in JupyterLab when an %%agent cell runs (real server, real Chromium)."""

from __future__ import annotations

import pytest

from .conftest import open_and_run, open_notebook, record_states, screenshot, wait_idle_after_run, write_notebook

pytestmark = pytest.mark.browser

SETUP = '''%load_ext jupyter_brain
import pandas as pd
from jupyter_brain import ScriptedProvider
sales = pd.DataFrame({"month": ["Jan", "Feb", "Mar", "Apr"], "revenue": [120, 135, 90, 110]})
answer = ("Thought: The drop from Feb to Mar is the largest.\\n"
          "Final Answer: **March** fell the most: revenue went from 135 to 90 (-45).\\n\\n"
          "| month | change |\\n|---|---|\\n| Mar | -45 |\\n\\n"
          "<img src=x onerror=\\"window.__xss = 1\\"> <a href=\\"javascript:window.__xss=2\\">link</a>")
bot = ScriptedProvider([
    {"text": "<think>I should look at the sales table first, then compute month-over-month changes.</think>"
             "Thought: I need the data.\\nAction: inspect_variable",
     "tool_calls": [{"name": "inspect_variable", "arguments": {"name": "sales"}}]},
    {"text": answer},
], reflections=["The data is loaded and the drop is clear. Confidence: 0.9"], delay_s=0.02)
'''

AGENT = '''%%agent --provider bot --think medium --reflect-every 1 --strategy react
Which month had the largest revenue drop in `sales`?'''

CHECK = '''print(_agent.status, len(_agent.tool_calls), len(_agent.reflections))'''


def test_agent_cell_renders_stream_thinking_reflection_tools(lab, page):
    base, root = lab
    write_notebook(root, "agent_view.ipynb", [SETUP, AGENT, CHECK])
    # Every length the view's text had before the turn ended, recorded at each change, to
    # prove it grows live.
    record_states(page, ".jb-agent-view", "v => [v.innerText.length, !!v.querySelector('.jb-turn-end')]")
    open_and_run(page, base, "agent_view.ipynb")
    view = page.locator(".jb-agent-view").first
    view.wait_for()
    # Streamed answer text arrives and is rendered as Markdown (bold, table).
    page.wait_for_function("document.querySelector('.jb-agent-view') && "
                           "document.querySelector('.jb-agent-view').innerText.includes('fell the most')")
    wait_idle_after_run(page)
    screenshot(page, "agent_view_done")
    samples = [length for length, ended in page.evaluate("window.__jbStates") if not ended]
    assert len(set(samples)) >= 5, f"the view did not grow while streaming: {sorted(set(samples))}"
    # #13: the finished turn's steps are folded under the answer; open them to read them.
    view.locator(".jb-process-summary").click()
    text = view.inner_text()
    assert "March" in text and "135 to 90" in text
    assert view.locator("strong", has_text="March").count() >= 1
    assert view.locator("table").count() >= 1
    # Model markdown is sanitized: no handler ran, no javascript: link survived.
    assert page.evaluate("window.__xss === undefined")
    assert view.locator("a[href^='javascript']").count() == 0
    # Thinking is collapsed when done and expands on click.
    details = view.locator("details.jb-thinking").filter(has_text="look at the sales table").first
    assert details.count() == 1
    assert details.get_attribute("open") is None
    details.locator("summary").first.click()
    page.wait_for_function("() => [...document.querySelectorAll('.jb-agent-view details.jb-thinking')].some(d => d.open)")
    assert details.get_attribute("open") is not None
    screenshot(page, "agent_view_thinking_open")
    # A reflection card and a tool row.
    assert "drop is clear" in text
    tool_rows = view.locator(".jb-tool-name", has_text="inspect_variable")
    assert tool_rows.count() >= 1
    # The check cell's output confirms the kernel side.
    assert page.locator(".jp-OutputArea-output", has_text="completed 1 2").count() >= 1


def test_reopened_notebook_shows_the_transcript(lab, page):
    """A reopened (untrusted) notebook shows each finished turn as the live view drew it.

    A finished turn is saved as data (``application/vnd.jupyter-brain.turn+json``, #24),
    which the extension's renderer (safe for untrusted outputs) draws, with no kernel and no
    widget state needed; its Markdown fallback is for where the extension is absent
    (``test_saved_turn_in_lab.py`` checks that fallback's dollars).
    """
    import shutil
    from pathlib import Path

    base, root = lab
    shutil.copy(Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb", root / "reopened.ipynb")
    open_notebook(page, base, "reopened.ipynb")
    output = page.locator(".jb-turn-output .jb-agent-view", has_text="largest revenue drop").first
    output.wait_for()
    output.scroll_into_view_if_needed()
    # Stable once the answers are laid out: the steps' figures load lazily, only when their
    # fold is opened and scrolled to, so the cells' images are not all complete before.
    screenshot(page, "reopened_quickstart", stable=".jb-turn-output .jb-answer")
    output.locator(".jb-process-summary").first.click()  # the folded steps, opened
    text = output.inner_text()
    assert "largest revenue drop" in text and "July" in text and "completed" in text
    # Dollar amounts are not typeset as LaTeX (JupyterLab's MathJax reads $…$ as math).
    assert "from $57,100 to $44,900" in text
    assert output.locator("mjx-container").count() == 0
    assert output.locator("details.jb-thinking").count() >= 1
    assert output.locator(".jb-tool-name", has_text="run_python").count() >= 1
    assert page.locator(".jp-OutputArea-output", has_text="Agent — Turn 1").count() == 0  # not the fallback
