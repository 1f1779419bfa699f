"""MCP on the tool timeline in real JupyterLab, against real servers over stdio: the demo
server's ``slow`` (progress 1/2 "started" and the log line "slow: started", then a sleep
until cancelled) and ``@modelcontextprotocol/server-everything``'s sampling tool.

One notebook, one kernel: while ``slow`` runs, its row shows the progress line and bar,
and the step holds the folded server log (light and dark theme); the stop button
(a kernel interrupt) ends the turn, the progress line is gone and the log fold is there
once. Then, in ``ask`` mode, the sampling request's approval card sits under the waiting
tool's row; a click on Approve lets the scripted model's completion reach the tool result.
Screenshots: mcp_progress_row{,_dark}.png, mcp_after_stop.png, mcp_sampling_{card,done}.png."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ..mcp_client.servers import require_installed
from .conftest import open_notebook, run_cell, screenshot, wait_idle_after_run, wait_layout_stable, write_notebook

pytestmark = pytest.mark.browser

MCP = Path(__file__).resolve().parents[1] / "mcp_client"
DEMO = MCP / "demo_server.py"
EVERYTHING = MCP / "npm" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"

SETUP = f"""%load_ext jupyter_brain
import tempfile
from jupyter_brain.providers.scripted import ScriptedProvider
%config AgentMagics.data_dir = tempfile.mkdtemp()
%config AgentMagics.permission = "ask"
%agent mcp add demo -- {sys.executable} {DEMO}
%agent mcp add everything -- node {EVERYTHING} stdio
%agent allow everything__trigger-sampling-request
slow_bot = ScriptedProvider([
    {{"text": "Starting the slow job.", "tool_calls": [{{"name": "demo__slow", "arguments": {{}}}}]}},
])
sampling_bot = ScriptedProvider([
    {{"text": "Asking the server.", "tool_calls": [{{"name": "everything__trigger-sampling-request",
                                                  "arguments": {{"prompt": "say hi", "maxTokens": 20}}}}]}},
    "Sampled words.",
    "The server got its completion.",
])"""

CELLS = [SETUP, "%%agent --provider slow_bot\nRun the slow job.",
         "%%agent --provider sampling_bot\nAsk the server for a completion."]

# The tool rows, progress lines, log folds and approval cards of the view in cell `i`.
VIEW_JS = """(i) => {
    const cell = window.jupyterapp.shell.currentWidget.content.widgets[i].node;
    const all = (sel) => [...cell.querySelectorAll(sel)];
    const text = (el, sel) => { const x = el.querySelector(sel); return x ? x.textContent : null; };
    return {
        views: all('.jb-agent-view').length,
        running: !!cell.querySelector('.jb-turn.jb-running'),
        end: text(cell, '.jb-turn-end'),
        rows: all('.jb-tool').map(r => ({
            tool: r.dataset.tool, cls: r.className, meta: text(r, '.jb-tool-meta'),
            progress: r.querySelectorAll('.jb-tool-progress').length, text: text(r, '.jb-progress-text'),
            bar: r.querySelector('.jb-progress-bar') ? !r.querySelector('.jb-progress-bar').hidden : null,
            fill: r.querySelector('.jb-progress-fill') ? r.querySelector('.jb-progress-fill').style.width : null,
            cards: [...r.querySelectorAll('.jb-approval')].map(c => ({
                tool: text(c, '.jb-approval-tool'), cls: c.className, status: text(c, '.jb-approval-status'),
                body: c.textContent})),
            result: text(r, '.jb-tool-result'),
        })),
        cards: all('.jb-approval').length,
        logs: all('details.jb-server-log').map(d => ({
            summary: text(d, '.jb-server-log-summary'), lines: [...d.querySelectorAll('.jb-log-line')].map(l => l.textContent),
            step: !!d.closest('.jb-step')})),
    };
}"""


def _view(page, cell: int) -> dict:
    return page.evaluate(VIEW_JS, cell)


def _center(page, selector: str) -> None:
    page.locator(selector).evaluate("e => e.scrollIntoView({block: 'center'})")


def _theme(page, name: str) -> None:
    page.evaluate("t => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", name)
    page.wait_for_function("l => document.body.dataset.jpThemeLight === l", arg="true" if "Light" in name else "false")
    wait_layout_stable(page, ".jp-NotebookPanel")


def test_progress_log_and_sampling_card_on_the_timeline(lab, page):
    require_installed(EVERYTHING, "server-everything is not installed: run `npm ci` in tests/mcp_client/npm")
    base, root = lab
    write_notebook(root, "mcp_rows.ipynb", CELLS)
    open_notebook(page, base, "mcp_rows.ipynb")
    run_cell(page, 0)
    wait_idle_after_run(page)

    # 1. While slow runs (it sleeps until cancelled): its progress on its row, the log folded.
    run_cell(page, 1)
    page.wait_for_function("""() => {
        const row = document.querySelector('.jb-tool[data-tool="demo__slow"]');
        const t = row && row.querySelector('.jb-progress-text');
        const lines = [...document.querySelectorAll('.jb-step .jb-server-log .jb-log-line')];
        return t && t.textContent === '1/2 · started' && lines.some(l => l.textContent === 'demo info: slow: started');
    }""")
    live = _view(page, 1)
    assert live["running"] and live["cards"] == 0, live
    [row] = live["rows"]
    assert (row["meta"], row["progress"], row["text"], row["bar"], row["fill"]) == (
        "running…", 1, "1/2 · started", True, "50%"), row
    # (server-everything may log its roots at the turn's start: a fold of its own, before the steps)
    step_logs = [log for log in live["logs"] if log["step"]]
    assert step_logs == [{"summary": "MCP server log (demo) · 1 line", "lines": ["demo info: slow: started"],
                          "step": True}], live
    _center(page, '.jb-tool[data-tool="demo__slow"]')
    screenshot(page, "mcp_progress_row")
    _theme(page, "JupyterLab Dark")
    screenshot(page, "mcp_progress_row_dark")
    _theme(page, "JupyterLab Light")

    # 2. The stop button: the call is cancelled, the turn ends; no progress line is left.
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:interrupt-kernel')")
    wait_idle_after_run(page)
    ended = _view(page, 1)
    assert ended["views"] == 1 and not ended["running"] and "interrupted" in (ended["end"] or ""), ended
    [row] = ended["rows"]
    assert row["progress"] == 0 and "jb-tool-interrupted" in row["cls"] and row["meta"] == "interrupted", row
    assert [log for log in ended["logs"] if log["step"]] == step_logs, ended  # once, under its step
    page.evaluate("""() => {  // the folded steps open, as a user would to see the call
        const d = window.jupyterapp.shell.currentWidget.content.widgets[1].node.querySelector('details.jb-process');
        if (d) d.open = true;
    }""")
    _center(page, '.jb-tool[data-tool="demo__slow"]')
    screenshot(page, "mcp_after_stop")

    # 3. Sampling in ask mode: the card under the waiting tool's row; Approve completes it.
    run_cell(page, 2)
    card = page.wait_for_selector('.jb-tool[data-tool="everything__trigger-sampling-request"] .jb-approval.jb-pending')
    waiting = _view(page, 2)
    [row] = waiting["rows"]  # the request has no row of its own
    assert row["meta"] == "waiting for approval…" and waiting["cards"] == 1, waiting
    [shown] = row["cards"]
    assert shown["tool"] == "everything sampling" and "say hi" in shown["body"], shown
    _center(page, '.jb-tool[data-tool="everything__trigger-sampling-request"]')
    screenshot(page, "mcp_sampling_card")
    card.query_selector(".jb-approve").click()
    wait_idle_after_run(page)
    done = _view(page, 2)
    assert not done["running"] and done["end"] is not None and done["views"] == 1, done
    [row] = done["rows"]
    assert "jb-tool-ok" in row["cls"] and "Sampled words." in (row["result"] or ""), row
    assert done["cards"] == 1, done  # the decided card, shown once
    page.wait_for_function("""() => [...window.jupyterapp.shell.currentWidget.content.widgets[2].node
        .querySelectorAll('.jb-approval-status')].some(s => s.textContent.startsWith('✓ Approved'))""")
    page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets[2].node
        .querySelector('.jb-agent-view').scrollIntoView({block: 'center'})""")
    screenshot(page, "mcp_sampling_done")
