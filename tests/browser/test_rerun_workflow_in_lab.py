"""#24 "How it is shown", the real-browser part: the re-run workflow in JupyterLab.

One notebook, driven through JupyterLab's own commands and editor: Run All; edit the
second ``%%agent`` cell and run it (live); run it again unchanged (replayed); re-run the
first cell (replayed, in its place); save with widget state; restart the kernel and Run All (no model call, the
same answers, the agent's variable back); reopen and measure the file.

The model is a ``ScriptedProvider`` defined in the notebook that counts its calls in a
file the test reads from outside the kernel: a replayed call never reaches it, so replay
cannot fool the count. Screenshots: test-artifacts/screenshots/rerun_*.png.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from .conftest import (
    kernel_output,
    load_each_notebook,
    open_and_run,
    run_cell,
    run_command,
    screenshot,
    wait_idle_after_run,
    write_notebook,
)

pytestmark = pytest.mark.browser

NAME = "rerun_flow.ipynb"
TURN_MIME = "application/vnd.jupyter-brain.turn+json"
PER_CELL_LIMIT = 20_000  # the goal: bytes per %%agent cell beyond its text and figures
CODE = "best_month = max(sales, key=sales.get)\\nbest_month"
FIRST_ANSWER = "The best month is March."
EDITED_ANSWER = "Revenue grew from 120 in January to 150 in March."

SETUP = '''%load_ext jupyter_brain
from pathlib import Path
from jupyter_brain import ScriptedProvider
%config AgentMagics.permission = "auto"

class CountingBot(ScriptedProvider):
    """Counts every call that reaches the model in a file (a replayed call does not)."""
    def _next(self, messages, tools):
        calls = Path({calls!r})
        calls.write_text(str(int(calls.read_text() or 0) + 1) if calls.exists() else "1")
        return super()._next(messages, tools)

best = {{"text": "", "tool_calls": [{{"name": "run_python", "arguments": {{"code": "{code}"}}}}]}}
bot = CountingBot([best, "{first}", "Revenue grew every month.", "{edited}", best, "{first}"]
                  + ["a live call nobody expected"] * 4)
'''

DATA = "sales = {'Jan': 120, 'Feb': 135, 'Mar': 150}"
FIRST = "%%agent --provider bot\nWhich month sold best? Store it in `best_month`."
SECOND = "%%agent --provider bot\nSummarise the trend."
CHECK = "print('best_month =', best_month)"
EDIT = " Name the first and last month."  # typed at the end of SECOND's prompt

_CELLS = 5  # setup, data, two %%agent cells, the check
_FIRST, _SECOND, _CHECK = 2, 3, 4


_EXECUTION_COUNTS = """() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells
    .map(c => c.execution_count ?? null)"""


def _calls(root: Path) -> int:
    path = root / "rerun_calls.txt"
    return int(path.read_text()) if path.exists() else 0


def _kernel(page, code: str) -> str:
    return kernel_output(page, code)


def _view(page, index: int):
    """The agent view in cell ``index``'s output (the finished turn, drawn by the extension)."""
    return page.locator(".jp-Cell").nth(index).locator(".jp-OutputArea-output .jb-agent-view").first


def _run_cell(page, index: int) -> None:
    run_cell(page, index)
    wait_idle_after_run(page)


def _answer(page, index: int) -> str:
    """The answer as the view shows it (above the folded steps)."""
    return _view(page, index).locator(".jb-answer").first.inner_text()


def _model(page, index: int) -> str:
    """What the view's header names as provider / model, and its replay chip when shown."""
    header = _view(page, index).locator(".jb-header")
    model = header.locator(".jb-h-model").inner_text().strip()
    chip = header.locator(".jb-h-replayed")
    return f"{model} ({chip.inner_text().strip()})" if chip.is_visible() else model


def _turn_number(page, index: int) -> str:
    return _view(page, index).locator(".jb-h-turn").inner_text().strip()


def _output(page, index: int) -> str:
    return page.locator(".jp-Cell").nth(index).locator(".jp-OutputArea").inner_text()


def _save(page) -> None:
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")


@pytest.fixture()
def widget_state_saved(lab_server, page):
    """JupyterLab's "Save Jupyter widget state in notebooks" on, for this test only (the page
    reads it as it loads)."""
    load_each_notebook(page)
    path = lab_server.settings / "@jupyter-widgets" / "jupyterlab-manager" / "plugin.jupyterlab-settings"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"saveState": true}')
    yield
    path.unlink(missing_ok=True)


def test_run_edit_rerun_restart_run_all_save_reopen(lab, page, widget_state_saved):
    base, root = lab
    calls_file = root / "rerun_calls.txt"
    calls_file.unlink(missing_ok=True)
    setup = SETUP.format(calls=str(calls_file), code=CODE, first=FIRST_ANSWER, edited=EDITED_ANSWER)
    path = write_notebook(root, NAME, [setup, DATA, FIRST, SECOND, CHECK])

    # 1. Run All: both turns ask the model (the first one runs a tool).
    open_and_run(page, base, NAME)
    wait_idle_after_run(page)
    assert _calls(root) == 3
    assert FIRST_ANSWER in _answer(page, _FIRST)
    assert "Revenue grew every month." in _answer(page, _SECOND)
    assert "best_month = Mar" in _output(page, _CHECK)
    assert (_turn_number(page, _FIRST), _turn_number(page, _SECOND)) == ("Turn 1", "Turn 2")
    first_text = _view(page, _FIRST).inner_text()
    screenshot(page, "rerun_1_run_all")

    # 2a. Edit the second cell's prompt in the editor and run it: it goes live.
    editor = page.locator(".jp-Cell").nth(_SECOND).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type(EDIT)
    page.keyboard.press("Escape")
    _run_cell(page, _SECOND)
    assert _calls(root) == 4
    assert EDITED_ANSWER in _answer(page, _SECOND)
    # Live: the header names the model that answered (the edited text has no recording).
    assert _model(page, _SECOND) == "scripted / scripted"
    assert _view(page, _FIRST).inner_text() == first_text  # the first cell is untouched
    screenshot(page, "rerun_2a_edited_live")

    # 2b. Run it again unchanged: it replays (no call), and the session holds it once.
    _run_cell(page, _SECOND)
    assert _calls(root) == 4
    assert _model(page, _SECOND) == "scripted (replayed)"
    assert EDITED_ANSWER in _answer(page, _SECOND)
    assert _kernel(page, "print(_agent.replay)").strip() == "replayed"
    history = _kernel(page, "%agent history")
    assert history.count("Summarise the trend." + EDIT) == 1, history
    assert history.count("Which month sold best?") == 1, history
    assert "Revenue grew every month." not in history, history  # the replaced turn left
    screenshot(page, "rerun_2b_replayed")

    # 2c. Re-run the first cell unchanged. Its new turn takes its earlier turn's place (before
    # the second cell's), so its request is the recorded one: it replays, with no call, and the
    # history keeps the cells' order, each turn once.
    _run_cell(page, _FIRST)
    assert _calls(root) == 4
    assert FIRST_ANSWER in _answer(page, _FIRST)
    assert _model(page, _FIRST) == "scripted (replayed)"
    history = _kernel(page, "%agent history")
    assert history.count("Which month sold best?") == 1, history
    assert history.count("Summarise the trend." + EDIT) == 1, history
    assert history.index("Which month sold best?") < history.index("Summarise the trend."), history
    screenshot(page, "rerun_2c_first_rerun")

    # 3. Save, restart the kernel and Run All (accepting JupyterLab's dialog): every turn
    # replays, nothing reaches the model, the same answers show, the variable is back.
    _save(page)
    before = {i: _answer(page, i) for i in (_FIRST, _SECOND)}
    run_command(page, "notebook:restart-run-all")
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    dialog.locator(".jp-mod-accept").click()
    page.wait_for_function(f"() => JSON.stringify(({_EXECUTION_COUNTS})()) === JSON.stringify({list(range(1, _CELLS + 1))})")
    wait_idle_after_run(page)
    assert _calls(root) == 4
    for index, answer in ((_FIRST, FIRST_ANSWER), (_SECOND, EDITED_ANSWER)):
        assert answer in _answer(page, index)
        assert _model(page, index) == "scripted (replayed)"
    assert {i: _answer(page, i) for i in (_FIRST, _SECOND)} == before
    assert (_turn_number(page, _FIRST), _turn_number(page, _SECOND)) == ("Turn 1", "Turn 2")  # a fresh session
    assert "best_month = Mar" in _output(page, _CHECK)
    assert _kernel(page, "print(best_month)").strip() == "Mar"
    screenshot(page, "rerun_3_restart_run_all")

    # 4. Save (with widget state) and reopen: the turns read from the file, and each
    # %%agent cell costs at most 20 KB beyond its own text.
    _save(page)
    nb = json.loads(path.read_text())
    assert "widgets" in nb["metadata"], "the widget state was not saved"
    page.goto(f"{base}/lab/tree/{NAME}?reset")
    for index, answer in ((_FIRST, FIRST_ANSWER), (_SECOND, EDITED_ANSWER)):
        expect(_view(page, index)).to_contain_text(answer)
    assert page.locator(".jp-OutputArea-output .jb-agent-view").count() == 2  # nothing shown twice
    # The kernel still runs: the reconnected status bar shows its session, not "no turn yet".
    page.wait_for_function("() => (document.querySelector('.jb-status-item') || {}).textContent"
                           "?.startsWith('agent rerun_flow-2 ·')")
    screenshot(page, "rerun_4_reopened")
    agent_cells = [c for c in nb["cells"] if "".join(c["source"]).startswith("%%agent")]
    assert len(agent_cells) == 2
    # One finished turn per cell (the restarted kernel's new-session notice is a line of
    # stdout in the first one), and no widget view left behind.
    turns = [[o for o in c["outputs"] if TURN_MIME in o.get("data", {})] for c in agent_cells]
    assert [len(t) for t in turns] == [1, 1], [c["outputs"] for c in agent_cells]
    assert "widget-view+json" not in path.read_text()
    assert all(t[0]["metadata"]["jupyter_brain"]["recording"] for t in turns)  # the notebook carries them
    bare = json.loads(path.read_text())
    bare["metadata"].pop("widgets", None)
    for cell in bare["cells"]:
        if "".join(cell["source"]).startswith("%%agent"):
            cell["outputs"] = []
    added = len(path.read_bytes()) - len(json.dumps(bare, indent=1, ensure_ascii=False).encode())
    own = sum(len(json.dumps(t[0]["data"]["text/markdown"])) for t in turns)  # the turns' text and figures
    assert (added - own) / len(agent_cells) <= PER_CELL_LIMIT, (added, own)
