"""A %%compare cell in real JupyterLab: columns, the summary table, the ToT tree, mark best."""

from __future__ import annotations

import pytest

from .conftest import run_compare, screenshot

pytestmark = pytest.mark.browser

SETUP = '''%load_ext jupyter_brain
import tempfile
_tmp = tempfile.TemporaryDirectory()
%config AgentMagics.data_dir = _tmp.name
from jupyter_brain import ScriptedProvider
bots = {
    "react": ScriptedProvider(["Thought: 6 times 7.\\nFinal Answer: ReAct says **42**"], delay_s=0.01),
    "cot": ScriptedProvider(["Step 1: 6*7 = 42\\nFinal Answer: CoT says **42**"], delay_s=0.01),
    "tot": ScriptedProvider([
        "Candidate 1: multiply directly → Score: 0.9\\nCandidate 2: add 6 seven times → Score: 0.6\\n"
        "Candidate 3: guess → Score: 0.1\\nSelected: Candidate 1\\nFinal Answer: ToT says **42**"], delay_s=0.01),
    "reflexion": ScriptedProvider([{"error": "model overloaded"}]),
}
'''

COMPARE = '''%%compare --strategies react,cot,tot,reflexion --provider bots --out cmp
What is 6 times 7?'''

CHECK = '''print(sorted((r["strategy"], r["status"]) for r in cmp.rows))'''


def test_compare_cell_shows_columns_table_and_tree(lab, page):
    base, root = lab
    view = run_compare(page, base, root, "compare.ipynb", [SETUP, COMPARE, CHECK])
    view.scroll_into_view_if_needed()
    screenshot(page, "compare_view")
    # One column per strategy, each with its own streamed answer.
    columns = view.locator(".jb-compare-column")
    assert columns.count() == 4
    for key, text in (("react#1", "ReAct says"), ("cot#1", "CoT says"), ("tot#1", "ToT says")):
        column = view.locator(f'.jb-compare-column[data-key="{key}"]')
        assert text in column.inner_text()
        assert column.locator("strong", has_text="42").count() >= 1
    # The failing strategy shows its error in its column; the others completed.
    failed = view.locator('.jb-compare-column[data-key="reflexion#1"]')
    assert "overloaded" in failed.inner_text()
    assert failed.locator(".jb-error").count() >= 1
    # The table sorts by a clicked header.
    table = view.locator(".jb-compare-table")
    table.locator('th[data-key="strategy"]').click()
    names = table.locator("tbody tr").evaluate_all("rows => rows.map(r => r.dataset.strategy)")
    assert names == ["cot", "react", "reflexion", "tot"]
    table.locator('th[data-key="strategy"]').click()
    names = table.locator("tbody tr").evaluate_all("rows => rows.map(r => r.dataset.strategy)")
    assert names == ["tot", "reflexion", "react", "cot"]
    # The Tree-of-Thoughts tree (in the ToT column's tree section): the selected candidate and the pruned one.
    tree = view.locator('.jb-compare-column[data-key="tot#1"] [data-section="tree"] .jb-tot')
    assert tree.locator(".jb-tot-selected", has_text="multiply directly").count() == 1
    assert tree.locator(".jb-tot-pruned", has_text="guess").count() == 1
    assert tree.locator(".jb-tot-candidate").count() == 3
    # Mark best reaches the kernel (the cell has finished) and comes back as the winner.
    view.locator('.jb-compare-column[data-key="cot#1"] .jb-mark-best').click()
    page.wait_for_function("document.querySelector('.jb-compare-winner')?.textContent === 'Marked best: cot'")
    screenshot(page, "compare_view_marked")
    assert page.locator(".jp-OutputArea-output", has_text="('tot', 'completed')").count() >= 1
