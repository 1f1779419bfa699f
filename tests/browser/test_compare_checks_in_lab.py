"""Issue #27 in real JupyterLab: a checked %%compare with --runs 2 over four strategies shows
one column per strategy (its runs behind a picker, a failing run's tab red), a success
column first in the summary with each failure's reason on hover, numbers on one line."""

from __future__ import annotations

import pytest

from .conftest import run_compare, screenshot, wait_layout_stable

pytestmark = pytest.mark.browser

SETUP = '''%load_ext jupyter_brain
import tempfile, threading
_tmp = tempfile.TemporaryDirectory()
%config AgentMagics.data_dir = _tmp.name
from jupyter_brain import ScriptedProvider

def answers(*texts):
    """One reply per call, in order, shared by the runs (each run gets a copy of the bot)."""
    lock, left = threading.Lock(), list(texts)
    def reply(messages, tools):
        with lock:
            return left.pop(0)
    return ScriptedProvider([reply], delay_s=0.01)

bots = {
    "react": answers("Thought: 6 times 7.\\nFinal Answer: 42", "Thought: 6 times 7.\\nFinal Answer: 42"),
    "cot": answers("Step 1: 6*7 = 42\\nFinal Answer: 42", "Step 1: 6*7 = 41\\nFinal Answer: 41"),
    "tot": answers("Candidate 1: multiply → Score: 0.9\\nSelected: Candidate 1\\nFinal Answer: 42",
                   "Candidate 1: multiply → Score: 0.9\\nSelected: Candidate 1\\nFinal Answer: 42"),
    "reflexion": answers("Final Answer: forty", "Final Answer: forty"),
}
'''

COMPARE = '''%%compare --strategies react,cot,tot,reflexion --runs 2 --provider bots --expect 42
What is 6 times 7?'''

LAYOUT = """() => {
    const cols = [...document.querySelectorAll('.jb-compare-column')].filter(c => !c.hidden);
    const cells = [...document.querySelectorAll('.jb-compare-table tbody td')];
    const lineHeight = parseFloat(getComputedStyle(cells[0]).lineHeight) || 18;
    return {
        visible: cols.map(c => c.dataset.key),
        tops: cols.map(c => c.getBoundingClientRect().top),
        tabs: cols.map(c => [...c.querySelectorAll('.jb-run-tab')].map(t => [t.textContent, t.classList.contains('jb-run-failed')])),
        tallest: Math.max(...cells.map(td => td.getBoundingClientRect().height)),
        lineHeight,
        wraps: cells.filter(td => td.classList.contains('jb-num')).map(td => getComputedStyle(td).whiteSpace),
    };
}"""


def test_one_column_per_strategy_with_pass_fail(lab, page):
    base, root = lab
    view = run_compare(page, base, root, "compare_checks.ipynb", [SETUP, COMPARE])
    wait_layout_stable(page, ".jb-compare-view, .jb-compare-column, .jb-compare-table")
    geo = page.evaluate(LAYOUT)
    # Four strategies × two runs: four columns, not eight (two rows of two where four do not fit, #40).
    assert geo["visible"] == ["react#1", "cot#1", "tot#1", "reflexion#1"], geo["visible"]
    assert len({round(top) for top in geo["tops"]}) <= 2, geo["tops"]
    assert all([t[0] for t in tabs] == ["#1", "#2"] for tabs in geo["tabs"]), geo["tabs"]
    failed_tabs = {key: [t[1] for t in tabs] for key, tabs in zip(geo["visible"], geo["tabs"], strict=True)}
    assert failed_tabs["react#1"] == [False, False] and failed_tabs["tot#1"] == [False, False]
    assert sorted(failed_tabs["cot#1"]) == [False, True]  # one of cot's runs said 41
    assert failed_tabs["reflexion#1"] == [True, True]
    # Numbers stay on one line: no cell is taller than a line and its padding.
    assert set(geo["wraps"]) == {"nowrap"}
    assert geo["tallest"] < 2 * geo["lineHeight"], geo

    # Success first, each failure's reason on hover.
    heads = view.locator(".jb-compare-table thead th").all_inner_texts()
    assert heads[:2] == ["strategy", "success (95 % CI)"], heads
    cot = view.locator('.jb-compare-table tr[data-strategy="cot"] td.jb-compare-success')
    assert cot.inner_text() == "1/2 · 50 % (9–91 %)"
    assert "expected '42'" in cot.get_attribute("title") and "41" in cot.get_attribute("title")
    react = view.locator('.jb-compare-table tr[data-strategy="react"] td.jb-compare-success')
    assert react.inner_text() == "2/2 · 100 % (34–100 %)"
    view.scroll_into_view_if_needed()
    screenshot(page, "compare_checks_runs")

    # The picker: the failing run of cot, one click away, says why in its badge.
    column = view.locator('.jb-compare-column[data-key="cot#1"]')
    failing = column.locator(".jb-run-tab.jb-run-failed")
    run = failing.get_attribute("data-run")
    failing.click()
    shown = view.locator(f'.jb-compare-column[data-key="cot#{run}"]')
    shown.wait_for(state="visible")
    badge = shown.locator(".jb-compare-verdict")
    assert badge.inner_text() == "✗ fail" and "FAILED" in badge.get_attribute("title")
    assert "41" in shown.locator('[data-section="answer"]').inner_text()
    assert view.locator(".jb-compare-column:not([hidden])").count() == 4
    screenshot(page, "compare_checks_failing_run")
