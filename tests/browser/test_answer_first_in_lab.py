"""#13 as a person sees it in JupyterLab (real server, Debian's Chromium): the answer first
and once, the steps folded under one summary line that opens on click, run_python's code
as highlighted Python with its plot and table inside the tool row (and not again below the
widget), a ReAct turn as rows instead of labelled text, in the light and the dark theme.

Screenshots (test-artifacts/screenshots/): answer_first_{light,dark}.png (folded),
answer_first_open_{light,dark}.png (steps opened), strategy_rows_{light,dark}.png."""

from __future__ import annotations

import json

import pytest

from .conftest import open_and_run, screenshot, wait_idle_after_run, write_notebook

pytestmark = pytest.mark.browser

SETUP = '''%load_ext jupyter_brain
%matplotlib inline
import tempfile
import pandas as pd
from jupyter_brain import ScriptedProvider
%config AgentMagics.data_dir = tempfile.mkdtemp()
%config AgentMagics.permission = "auto"
sales = pd.DataFrame({"month": ["Jan", "Feb", "Mar", "Apr"], "revenue": [120, 135, 90, 110]})
code = ("import matplotlib.pyplot as plt\\n"
        "change = sales.set_index(\\"month\\")[\\"revenue\\"].diff()\\n"
        "ax = change.plot(kind=\\"bar\\", title=\\"Change in revenue\\", figsize=(4, 2.4))\\n"
        "change.to_frame(\\"change\\")")
bot = ScriptedProvider([
    {"text": "I will compute the month-over-month change and plot it.",
     "tool_calls": [{"name": "run_python", "arguments": {"code": code}}]},
    "**March** fell the most: revenue went from 135 to 90 (**-45**).\\n\\n| month | change |\\n|---|---|\\n| Mar | -45 |",
], delay_s=0.01)
react = ScriptedProvider([
    "Thought: The table shows the **drop** directly.\\nFinal Answer: **March** had the largest drop (-45).",
])'''

AGENT = "%%agent --provider bot\nWhich month had the largest revenue drop in `sales`? Plot the changes."
REACT = "%%agent --provider react --strategy react\nAnd which month dropped most, in one line?"

THE_VIEW = "document.querySelectorAll('.jb-agent-view')"
# The agent cell's outputs as the notebook model holds them: each output's MIME types, and
# in a finished turn's bundle the run_python call's figures (a reference or a URL, cut
# short) and the Markdown's inline images.
SAVED_FIGURES = """() => {
    const cell = window.jupyterapp.shell.currentWidget.content.model.cells.get(1);
    const outputs = [...Array(cell.outputs.length).keys()].map(i => cell.outputs.get(i).toJSON());
    return outputs.map(o => {
        const turn = (o.data || {})['application/vnd.jupyter-brain.turn+json'];
        const end = turn && turn.transcript.find(e => e.type === 'tool_call_end' && e.name === 'run_python');
        return {type: o.output_type, mimes: Object.keys(o.data || {}),
                images: end ? (end.images || []).map(u => String(u).slice(0, 40)) : null,
                preview: end ? String(end.result_preview || '').slice(0, 400) : null,
                markdownImages: ((o.data || {})['text/markdown'] || '').split('](data:image/').length - 1};
    });
}"""


def _set_theme(page, theme: str) -> None:
    page.evaluate(f"window.jupyterapp.commands.execute('apputils:change-theme', {{theme: '{theme}'}})")
    light = "true" if "Light" in theme else "false"
    page.wait_for_function(f"document.body.dataset.jpThemeLight === '{light}'")


def _run_and_check(lab, page, name: str, theme: str) -> dict:
    base, root = lab
    write_notebook(root, f"{name}.ipynb", [SETUP, AGENT, REACT])
    open_and_run(page, base, f"{name}.ipynb")
    _set_theme(page, theme)
    page.wait_for_function(f"{THE_VIEW}.length === 2 && [...{THE_VIEW}].every(v => v.querySelector('.jb-turn-end'))")
    wait_idle_after_run(page)
    view = page.locator(".jb-agent-view").first
    checks = view.evaluate("""v => {
        const text = v.textContent;
        const row = v.querySelector('.jb-tool[data-tool="run_python"]');
        const code = row && row.querySelector('pre.jb-code code.hljs.language-python');
        const cell = v.closest('.jp-Cell');
        return {
          answerOnce: text.split('fell the most').length - 1,
          answerFirst: !!v.querySelector('.jb-answer:not([hidden]) strong'),
          answerBeforeProcess: !!(v.querySelector('.jb-answer').compareDocumentPosition(
              v.querySelector('.jb-process')) & Node.DOCUMENT_POSITION_FOLLOWING),
          folded: v.querySelector('details.jb-process').open,
          summary: v.querySelector('.jb-process-summary').textContent,
          code: code ? code.textContent : null,
          keywords: code ? code.querySelectorAll('.hljs-keyword, .hljs-string').length : 0,
          rowText: row ? row.textContent : '',
          imgInRow: row ? row.querySelectorAll('img.jb-tool-image').length : 0,
          tableInRow: row ? row.querySelectorAll('.jb-output-html table').length : 0,
          imgsOutsideWidget: [...cell.querySelectorAll('.jp-OutputArea img')].filter(i => !i.closest('.jb-agent-view')).length,
          background: getComputedStyle(v).backgroundColor,
        };
    }""")
    assert checks["answerOnce"] == 1, checks
    assert checks["answerFirst"] and checks["answerBeforeProcess"], checks
    assert checks["folded"] is False, checks
    assert checks["summary"].startswith("✓2 steps · 1 tool · "), checks
    screenshot(page, f"answer_first_{name.rsplit('_', 1)[-1]}")
    # The fold opens on a click on its summary (a native <details>).
    view.locator(".jb-process-summary").first.click()
    page.wait_for_function(f"{THE_VIEW}[0].querySelector('details.jb-process').open === true")
    # Code as code: highlighted Python, no JSON, no \\n escapes.
    assert checks["code"] is not None and 'set_index("month")' in checks["code"], checks
    assert checks["keywords"] >= 2, checks
    assert "\\n" not in checks["rowText"] and '{"code"' not in checks["rowText"], checks
    # The plot and the table inside the tool row; the figure not again below the widget.
    if checks["imgInRow"] != 1:  # say where the figure was lost: never made, not saved, or not drawn
        checks["saved"] = page.evaluate(SAVED_FIGURES)
    assert checks["imgInRow"] == 1 and checks["tableInRow"] == 1, json.dumps(checks)
    assert checks["imgsOutsideWidget"] == 0, checks
    page.locator(".jb-tool[data-tool='run_python']").first.scroll_into_view_if_needed()
    screenshot(page, f"answer_first_open_{name.rsplit('_', 1)[-1]}")
    # The ReAct turn: rows (chip + Markdown), the Final Answer on top, no raw labels or **.
    react = page.locator(".jb-agent-view").nth(1)
    react.locator(".jb-process-summary").click()
    rows = react.evaluate("""v => ({
        text: v.textContent,
        chips: [...v.querySelectorAll('.jb-sstep .jb-chip')].map(c => c.textContent),
        answer: v.querySelector('.jb-answer strong') && v.querySelector('.jb-answer strong').textContent,
        bold: v.querySelector('.jb-sstep strong') && v.querySelector('.jb-sstep strong').textContent,
    })""")
    assert rows["chips"] == ["Thought"] and rows["answer"] == "March" and rows["bold"] == "drop", rows
    assert "**" not in rows["text"] and "Thought:" not in rows["text"], rows
    assert rows["text"].count("largest drop") == 1, rows
    react.scroll_into_view_if_needed()
    screenshot(page, f"strategy_rows_{name.rsplit('_', 1)[-1]}")
    return checks


def _luminance(rgb: str) -> float:
    r, g, b = (int(x) for x in rgb[rgb.index("(") + 1:rgb.index(")")].split(",")[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def test_answer_first_folded_steps_and_tools_by_kind_light(lab, page):
    checks = _run_and_check(lab, page, "answer_first_light", "JupyterLab Light")
    assert _luminance(checks["background"]) > 0.8, checks


def test_answer_first_in_the_dark_theme(lab, page):
    checks = _run_and_check(lab, page, "answer_first_dark", "JupyterLab Dark")
    assert _luminance(checks["background"]) < 0.3, checks
