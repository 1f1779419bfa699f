"""AgentView in real JupyterLab, fed events directly: it streams live (thinking open,
then collapsed, before the turn ends), every view of one model shows the same thing,
and model-written HTML cannot run."""

from __future__ import annotations

import time

import pytest

from .conftest import open_and_run, screenshot, wait_idle_after_run, write_notebook

pytestmark = pytest.mark.browser

CELLS = [
    "from jupyter_brain.widgets import AgentView\nview = AgentView()\nview",
    """import re, time
from jupyter_brain.agent.events import *
def emit(e, pause=0.0):
    view.handle(e)
    time.sleep(pause)
emit(TurnStart(session_id='default', user_message='go', provider='scripted', model='demo', think_level='high'))
emit(StepStart(step=1))
for w in 'one two three four five six seven eight'.split():
    emit(ThinkingDelta(step=1, text=w + ' '), 0.15)
emit(ThinkingEnd(step=1))
for t in re.findall(r'\\S+\\s*', 'Hi <img src=x onerror="window.pwned=1"> <script>window.pwned=2</script> done '):
    emit(TextDelta(step=1, text=t))
emit(ToolCallStart(step=1, call_id='c1', name='python'))
emit(ToolCallArgs(step=1, call_id='c1', name='python', arguments={'code': '1+1'}, wave=1))
emit(ToolCallEnd(step=1, call_id='c1', name='python', status='ok', duration_ms=5, wave=1, result_preview='2'), 0.3)
emit(StepEnd(step=1))
emit(StepStart(step=2))
for i in range(2000):
    emit(TextDelta(step=2, text=f'w{i} '), 0.0005 if i % 2 else 0)
emit(StepEnd(step=2))
emit(TurnEnd(status='completed', text='', steps=2, tool_calls=1, duration_ms=3000))""",
    "view  # a second view of the same model, rendered from the shared buffer",
]

STATE_JS = """() => {
  const v = document.querySelector('.jb-agent-view');  // the first view, streamed into live
  const t = v.querySelector('.jb-thinking-text');
  const d = v.querySelector('details.jb-thinking');
  return {thinking: t ? t.textContent.length : -1, open: d ? d.open : null,
          tools: v.querySelectorAll('.jb-tool').length, ended: !!v.querySelector('.jb-turn-end')};
}"""

FINAL_JS = """() => {
  const v = [...document.querySelectorAll('.jb-agent-view')];
  return {same: v[0].innerHTML === v[1].innerHTML, pwned: window.pwned ?? null,
          unsafe: document.querySelectorAll('.jb-agent-view script, .jb-agent-view [onerror]').length,
          words: v[0].querySelector('.jb-answer .jb-text').textContent.trim().split(/\\s+/).length,  // #13: answer first
          badge: v[0].querySelector('.jb-badge').textContent};
}"""


def test_agent_view_streams_live_and_views_agree(lab, page):
    base, root = lab
    write_notebook(root, "agent_view_live.ipynb", CELLS)
    open_and_run(page, base, "agent_view_live.ipynb")
    page.wait_for_selector(".jb-agent-view", timeout=120_000)
    samples = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        samples.append(page.evaluate(STATE_JS))
        if len(samples) == 6:
            screenshot(page, "agent_view_live_thinking")
        if samples[-1]["ended"]:
            break
        time.sleep(0.1)
    wait_idle_after_run(page)
    page.wait_for_function("document.querySelectorAll('.jb-agent-view').length === 2", timeout=30_000)
    final = page.evaluate(FINAL_JS)
    live = [s for s in samples if not s["ended"]]
    # It streamed: thinking grew while open, then collapsed, all before the turn ended.
    growing = [s["thinking"] for s in live if s["open"]]
    assert len(set(growing)) >= 3, samples
    assert any(s["open"] is False for s in live), samples
    assert samples[-1] == {"thinking": 40, "open": False, "tools": 1, "ended": True}
    assert final == {"same": True, "pwned": None, "unsafe": 0, "words": 2000, "badge": "✓ completed"}
