"""#40 in real JupyterLab: the agent view's front-end code crosses the wire once per kernel.
The kernel's first view carries it; a second view carries only the loader and still renders
(the page keeps the module). After a page reload, a view whose model holds no code asks the
kernel for it and renders."""

from __future__ import annotations

import pytest

from .conftest import (
    kernel_output,
    open_and_run,
    open_notebook,
    run_command,
    screenshot,
    wait_idle_after_run,
    write_notebook,
)

pytestmark = pytest.mark.browser

CELLS = [
    """from jupyter_brain.widgets import AgentView
from jupyter_brain.agent.events import TurnStart, StepStart, TextDelta, StepEnd, TurnEnd
def turn(word):
    return [TurnStart(session_id='default', user_message='say ' + word, provider='scripted', model='demo'),
            StepStart(step=1), TextDelta(step=1, text=word + ' is the answer'), StepEnd(step=1),
            TurnEnd(status='completed', text=word, steps=1, tool_calls=0, duration_ms=10)]
first = AgentView(turn('alpha'))
first""",
    "second = AgentView(turn('bravo'))\nsecond",
]


def views_with(page, word: str):
    return page.locator(".jb-agent-view", has_text=f"{word} is the answer")


def test_a_second_view_renders_without_the_code_and_after_a_reload(lab, page):
    base, root = lab
    write_notebook(root, "shared_code.ipynb", CELLS)
    open_and_run(page, base, "shared_code.ipynb")
    wait_idle_after_run(page)
    views_with(page, "alpha").first.wait_for()
    views_with(page, "bravo").first.wait_for()
    carried = kernel_output(page, "print(len(first._code_js), len(second._code_js), len(second._esm))")
    first_js, second_js, loader = (int(n) for n in carried.split())
    assert first_js > 50_000 and second_js == 0 and loader < 4000, carried
    screenshot(page, "shared_code_two_views")
    # A reload: the page forgets the module. The first view goes (its model held the code);
    # the second, restored from the kernel, must get its code by asking the kernel.
    kernel_output(page, "first.close()\nasked = []\nsecond.on_msg(lambda w, c, b: asked.append(c.get('kind')))")
    run_command(page, "docmanager:save")
    page.wait_for_function("() => window.__jbRun.done")
    page.reload()
    open_notebook(page, base, "shared_code.ipynb", reset=False)
    views_with(page, "bravo").first.wait_for()
    assert "need_code" in kernel_output(page, "print(asked)")
    assert page.evaluate("() => Object.values(globalThis.__jupyterBrainCode || {}).map(s => s.state)") == ["done"]
    screenshot(page, "shared_code_after_reload")
