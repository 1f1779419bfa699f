"""AgentView in real JupyterLab, fed events directly: it streams live (thinking open,
then collapsed, before the turn ends), every view of one model shows the same thing,
and model-written HTML cannot run. A MutationObserver records every state the first view
shows; the stream pauses mid-thinking until the test took its screenshot (a file it writes)."""

from __future__ import annotations

import pytest

from .conftest import open_and_run, record_states, screenshot, wait_idle_after_run, write_notebook

pytestmark = pytest.mark.browser

CELLS = [
    "from jupyter_brain.widgets import AgentView\nview = AgentView()\nview",
    """import os, re, time
from jupyter_brain.agent.events import *
def emit(e, pause=0.0):
    view.handle(e)
    time.sleep(pause)
emit(TurnStart(session_id='default', user_message='go', provider='scripted', model='demo', think_level='high'))
emit(StepStart(step=1))
for i, w in enumerate('one two three four five six seven eight'.split()):
    emit(ThinkingDelta(step=1, text=w + ' '), 0.15)
    while i == 3 and not os.path.exists('agent_view_live.go'):  # the test's screenshot first
        time.sleep(0.02)
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

STATE_JS = """v => {  // the first view, streamed into live
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
    record_states(page, ".jb-agent-view", STATE_JS)
    open_and_run(page, base, "agent_view_live.ipynb")
    # Four words of thinking, streamed into the open block; the kernel waits for the screenshot.
    page.wait_for_function("""() => {
        const t = document.querySelector('.jb-agent-view .jb-thinking-text');
        const d = document.querySelector('.jb-agent-view details.jb-thinking');
        return t && d && d.open && t.textContent.trim().split(/\\s+/).length === 4;
    }""")
    screenshot(page, "agent_view_live_thinking")
    (root / "agent_view_live.go").touch()
    page.wait_for_function("() => window.__jbStates.some(s => s.ended)")
    wait_idle_after_run(page)
    page.wait_for_function("document.querySelectorAll('.jb-agent-view').length === 2")
    final = page.evaluate(FINAL_JS)
    states = page.evaluate("window.__jbStates")
    ended = next(i for i, s in enumerate(states) if s["ended"])
    live = states[:ended]
    # It streamed: thinking grew while open, then collapsed, all before the turn ended.
    growing = [s["thinking"] for s in live if s["open"]]
    assert len(set(growing)) >= 3, states
    assert any(s["open"] is False for s in live), states
    assert states[ended] == {"thinking": 40, "open": False, "tools": 1, "ended": True}, states
    assert final == {"same": True, "pwned": None, "unsafe": 0, "words": 2000, "badge": "✓ completed"}
