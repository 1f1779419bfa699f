"""Issues #13 and #40 in real JupyterLab: the CompareView compares (equal-width columns side by
side that wrap below their minimum width, never cut off, each as tall as its own content, the
winner highlighted), the
Tree-of-Thoughts tree is a nested tree in the CompareView and the AgentView alike, both
themes work, and the strategies / comparison notebooks as a user opens them (screenshots)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from .conftest import (
    copy_notebook,
    copy_tree,
    open_and_run,
    run_compare,
    screenshot,
    wait_idle_after_run,
    wait_layout_stable,
)

pytestmark = pytest.mark.browser

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

SETUP = '''%load_ext jupyter_brain
import tempfile
_tmp = tempfile.TemporaryDirectory()
%config AgentMagics.data_dir = _tmp.name
from jupyter_brain import ScriptedProvider
TOT = ("Candidate 1: multiply directly → Score: 0.9\\nCandidate 2: add 6 seven times → Score: 0.6\\n"
       "Candidate 3: guess → Score: 0.1\\nSelected: Candidate 1\\nReason: exact.\\n"
       "=== Decision Point ===\\nCandidate 1: state it plainly → Score: 0.8\\n"
       "Candidate 2: show the working → Score: 0.3\\nSelected: Candidate 1\\n"
       "Final Answer: ToT says **42**")
bots = {
    "react": ScriptedProvider(["Thought: 6 times 7.\\nFinal Answer: ReAct says **42**, a long answer that wraps "
                               "over several lines in a narrow column, so the answer rows differ in height"],
                              delay_s=0.01),
    "cot": ScriptedProvider(["Step 1: 6*7 = 42\\nFinal Answer: CoT says **42**"], delay_s=0.01),
    "tot": ScriptedProvider([TOT], delay_s=0.01),
    "reflexion": ScriptedProvider([{"error": "model overloaded"}]),
}
tot_bot = ScriptedProvider([TOT], delay_s=0.01)
'''

COMPARE = '''%%compare --strategies react,cot,tot,reflexion --provider bots --out cmp
What is `6` times 7?'''

AGENT = '''%%agent --provider tot_bot --strategy tot
What is 6 times 7?'''

# Where each column's sections start (y), per section name.
SECTION_TOPS = """() => {
    const cols = [...document.querySelectorAll('.jb-compare-column')];
    const out = {};
    for (const name of ['head', 'answer', 'steps', 'tools', 'tokens', 'cost']) {
        out[name] = cols.map(c => c.querySelector(`[data-section="${name}"]`).getBoundingClientRect().top);
    }
    out.boxes = cols.map(c => { const r = c.getBoundingClientRect(); return [r.left, r.top, r.width]; });
    const s = document.querySelector('.jb-compare-scroll');
    out.scroll = [s.scrollWidth, s.clientWidth, getComputedStyle(s).overflowX];
    return out;
}"""


def _luminance(page, selector: str) -> float:
    """Relative luminance (0 dark … 1 light) of the first match's computed background."""
    return page.evaluate(
        """(sel) => {
            let el = document.querySelector(sel);
            while (el) {
                const m = getComputedStyle(el).backgroundColor.match(/[\\d.]+/g);
                if (m && (m.length < 4 || Number(m[3]) > 0)) {
                    const [r, g, b] = m.slice(0, 3).map(Number).map(v => v / 255);
                    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
                }
                el = el.parentElement;
            }
            return 1;
        }""",
        selector,
    )


def _theme(page, name: str) -> None:
    page.evaluate(f"() => window.jupyterapp.commands.execute('apputils:change-theme', {{theme: '{name}'}})")
    light = "true" if "Light" in name else "false"
    page.wait_for_function(f"document.body.dataset.jpThemeLight === '{light}'")
    # The theme's CSS is in (the attribute follows its load); the shell, hidden for a frame
    # to redraw, is back and laid out.
    wait_layout_stable(page, ".jp-NotebookPanel")


def test_compare_columns_wrap_uncut_and_highlight_the_winner(lab, page):
    base, root = lab
    view = run_compare(page, base, root, "compare_layout.ipynb", [SETUP, COMPARE, AGENT])
    # The summary table comes first, above the columns.
    order = view.evaluate("v => [...v.children].map(c => c.className)")
    assert order.index("jb-compare-table-wrap") < order.index("jb-compare-scroll")

    wait_layout_stable(page, ".jb-compare-view, .jb-compare-column, .jb-compare-column [data-section]")
    geo = page.evaluate(SECTION_TOPS)
    boxes = geo["boxes"]
    assert len(boxes) == 4
    # Equal widths, left to right within a row; none reaches past the view (a narrow view
    # wraps them onto a second row instead), so nothing needs a sideways scroll (#40).
    assert max(b[2] for b in boxes) - min(b[2] for b in boxes) < 1, boxes
    right = view.evaluate("v => v.getBoundingClientRect().right")
    assert all(b[0] + b[2] <= right + 1 for b in boxes), (boxes, right)
    scroll_width, client_width, _ = geo["scroll"]
    assert scroll_width <= client_width + 1, geo["scroll"]
    rows = sorted({round(b[1]) for b in boxes})
    for top in rows:
        row = [b for b in boxes if round(b[1]) == top]
        assert [b[0] for b in row] == sorted(b[0] for b in row), boxes
    # Each column is as tall as its own content: the heads of a row line up, the columns
    # do not stretch to the tallest (cot's short answer is shorter than react's long one).
    for top in rows:
        heads = [h for h, b in zip(geo["head"], boxes, strict=True) if round(b[1]) == top]
        assert max(heads) - min(heads) < 1, (top, heads)
    answers = page.evaluate("Object.fromEntries([...document.querySelectorAll('.jb-compare-column')].map(c => "
                            "[c.dataset.key, c.querySelector('[data-section=answer]').getBoundingClientRect().height]))")
    assert answers["cot#1"] < answers["react#1"], answers
    heights = page.evaluate("[...document.querySelectorAll('.jb-compare-column')].map(c => c.getBoundingClientRect().height)")
    assert len({round(h) for h in heights}) > 1, heights
    # The title renders the prompt's inline Markdown (no raw backticks).
    title = view.locator(".jb-compare-title")
    assert "`" not in title.inner_text() and title.locator("code", has_text="6").count() == 1

    # The answer once per column, first; the failed run says so.
    react = view.locator('.jb-compare-column[data-key="react#1"]')
    assert react.locator('[data-section="answer"] strong', has_text="42").count() == 1
    assert react.inner_text().count("ReAct says") == 1
    failed = view.locator('.jb-compare-column[data-key="reflexion#1"]')
    assert "failed" in failed.locator('[data-section="answer"]').inner_text()
    assert failed.inner_text().count("model overloaded") == 1

    # The ToT tree, nested: decision 2 hangs under the candidate selected at decision 1.
    tree = view.locator('.jb-compare-column[data-key="tot#1"] [data-section="tree"] .jb-tot')
    assert tree.count() == 1
    nested = tree.locator('.jb-tot-point[data-point="1"] > .jb-tot-candidates > .jb-tot-branch-selected '
                          '.jb-tot-point[data-point="2"]')
    assert nested.count() == 1
    assert tree.locator(".jb-tot-selected").count() == 2
    assert tree.locator(".jb-tot-pruned", has_text="guess").count() == 1
    assert tree.locator(".jb-tot-pruned", has_text="show the working").count() == 1
    selected_color = tree.locator(".jb-tot-selected").first.evaluate("e => getComputedStyle(e).borderTopColor")
    pruned_opacity = tree.locator(".jb-tot-pruned").first.evaluate("e => Number(getComputedStyle(e).opacity)")
    brand = page.evaluate("getComputedStyle(document.body).getPropertyValue('--jp-brand-color1').trim()")
    assert brand and selected_color not in ("rgba(0, 0, 0, 0)", "transparent")
    assert pruned_opacity < 1
    view.scroll_into_view_if_needed()
    screenshot(page, "compare_layout_light")

    # Mark best: the column and its table row are highlighted.
    view.locator('.jb-compare-column[data-key="cot#1"] .jb-mark-best').click()
    page.wait_for_function("document.querySelector('.jb-compare-winner')?.textContent === 'Marked best: cot'")
    best = view.locator(".jb-compare-column.jb-compare-best")
    assert best.count() == 1 and best.get_attribute("data-key") == "cot#1"
    assert best.evaluate("e => getComputedStyle(e).boxShadow") != "none"
    assert best.locator(".jb-compare-best-badge").is_visible()
    assert view.locator("tr.jb-row-best").get_attribute("data-strategy") == "cot"
    screenshot(page, "compare_layout_marked")

    # The AgentView's ToT turn shows the same nested tree (in its steps).
    agent = page.locator(".jb-agent-view").last
    agent.scroll_into_view_if_needed()
    agent.locator("details.jb-process > summary").first.click()  # open the folded steps
    agent_tree = agent.locator(".jb-tot")
    agent_tree.wait_for()
    assert agent_tree.locator(".jb-tot-branch-selected .jb-tot-point[data-point='2']").count() == 1
    assert agent_tree.locator(".jb-tot-selected").count() == 2
    assert agent.inner_text().count("ToT says") == 1
    agent_tree.scroll_into_view_if_needed()
    screenshot(page, "tot_tree_agent_view_light")

    # Dark theme: the views follow JupyterLab's variables (dark backgrounds, no light boxes).
    assert _luminance(page, ".jb-compare-column") > 0.6
    _theme(page, "JupyterLab Dark")
    assert _luminance(page, ".jb-compare-column") < 0.3
    assert _luminance(page, ".jb-compare-head") < 0.3
    assert _luminance(page, ".jb-tot-selected") < 0.3
    agent_tree.scroll_into_view_if_needed()
    screenshot(page, "tot_tree_agent_view_dark")
    view.scroll_into_view_if_needed()
    screenshot(page, "compare_layout_dark")


@pytest.mark.parametrize("name", ["quickstart", "strategies", "strategy_comparison"])
def test_example_notebooks_in_both_themes(lab, page, name):
    """The notebooks as a user opens them (scripted models, offline): screenshots of the first
    screen and of the Tree-of-Thoughts / comparison output, light and dark."""
    base, root = lab
    for item in ("demo_models", "data"):
        copy_tree(NOTEBOOKS / item, root / item)
    copy_notebook(NOTEBOOKS / f"{name}.ipynb", root, f"{name}.ipynb")
    open_and_run(page, base, f"{name}.ipynb")
    page.locator(".jb-agent-view, .jb-compare-view").first.wait_for()
    wait_idle_after_run(page)
    tracebacks = page.locator(".jp-RenderedText", has_text="Traceback")  # an error output, or stderr
    assert tracebacks.count() == 0, [text[-3000:] for text in tracebacks.all_inner_texts()]
    page.locator(".jp-Cell").first.scroll_into_view_if_needed()
    wait_layout_stable(page, ".jp-Cell")
    # The first screen shows the data and the first %%agent / %%compare cell (the scripted
    # models live in demo_models/, not in the notebook).
    top = page.locator(".jp-Cell").first.bounding_box()["y"]
    first_magic = page.locator(".jp-CodeCell .jp-InputArea", has_text="%%").first.bounding_box()["y"]
    assert first_magic - top < 900, (top, first_magic)
    screenshot(page, f"notebook_{name}_top_light")
    target = page.locator(".jb-compare-view").first if name == "strategy_comparison" else \
        page.locator(".jb-agent-view", has=page.locator(".jb-tot")).first
    if name == "quickstart":  # data → %%agent → the answer, all on the first screen
        target = page.locator(".jb-agent-view").first
        answer = target.locator(".jb-answer")
        assert answer.count() == 1
        expect(answer).to_be_visible()
        wait_layout_stable(page, ".jb-agent-view .jb-answer")
        assert answer.bounding_box()["y"] + 40 < page.viewport_size["height"], answer.bounding_box()
    if name == "strategies":
        tot = page.locator(".jb-agent-view").nth(3)
        tot.locator("details.jb-process > summary").first.click()
        target = tot
        assert tot.locator(".jb-tot-selected").count() == 1
    target.scroll_into_view_if_needed()
    screenshot(page, f"notebook_{name}_light")
    _theme(page, "JupyterLab Dark")
    assert _luminance(page, ".jb-agent-view, .jb-compare-column") < 0.3
    target.scroll_into_view_if_needed()
    screenshot(page, f"notebook_{name}_dark")
