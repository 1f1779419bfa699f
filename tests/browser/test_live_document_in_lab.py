"""An outside agent's cell appears live in the notebook a user has open in a collaborative
JupyterLab (jupyter-collaboration, issue #35 §3): the user has typed into cell 0 without
saving; an MCP client inserts a cell and runs it; the tab shows the new cell and its output
without any reload, in the tab's own kernel, and the user's typing is still there, in the
tab and, after the collaboration autosave, in the file. Screenshot: live_document_in_lab.png.

Runs where jupyter-collaboration is installed (the test venv; its JupyterLab started with
real-time collaboration on, unlike every other browser test's)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import anyio
import pytest
from playwright.sync_api import expect

from ..server.jupyter import _call_tools, saved_notebook
from .conftest import (
    endpoint_of,
    kernel_output,
    open_notebook,
    run_cell,
    screenshot,
    serve_endpoint_lab,
    wait_idle_after_run,
    write_notebook,
)

pytest.importorskip("jupyter_server_ydoc", reason="jupyter-collaboration is not installed (the collaboration extra)")
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def rtc_lab(tmp_path_factory):
    yield from serve_endpoint_lab(tmp_path_factory, "rtc-lab", "--JupyterBrainMCP.permission=auto", rtc=True)


def test_an_agents_cell_appears_live_and_the_users_typing_is_kept(rtc_lab, page) -> None:
    base, root = rtc_lab.base, rtc_lab.root
    write_notebook(root, "live.ipynb", ["base = 20", "print('untouched')"])
    open_notebook(page, base, "live.ipynb")
    # jupyter-collaboration asks "taking some time to load" when its room takes over 5 s (a busy
    # machine); the tab is loaded by now, so that dialog can only be there already: dismissed
    loading = page.locator(".jp-Dialog[aria-label^='Loading']")
    if loading.count():
        loading.get_by_role("button", name="Continue waiting").click()
        expect(loading).to_have_count(0)
    run_cell(page, 0)
    wait_idle_after_run(page)
    cells = page.locator(".jp-Notebook .jp-Cell")
    cells.nth(0).locator(".cm-content").click()  # the user types into cell 0, and does not save
    page.keyboard.press("End")
    page.keyboard.type("  # my note")
    expect(cells.nth(0).locator(".jp-InputArea")).to_contain_text("base = 20  # my note")

    source = "answer = base * 2 + 2\nprint('answer', answer)"
    calls = [("insert_cell", {"path": "live.ipynb", "source": source}),
             ("execute_cell", {"path": "live.ipynb", "index": -1})]
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API keeps an event loop running on this thread
        replies = pool.submit(anyio.run, _call_tools, endpoint_of(rtc_lab), calls, "live-agent", None).result()
    assert not any(r.is_error for r in replies), [r.text for r in replies]
    assert "answer 42" in replies[1].text

    # no reload: the shared model brought the cell and its output into the tab
    expect(cells).to_have_count(3)
    expect(cells.nth(2).locator(".jp-InputArea")).to_contain_text("answer = base * 2 + 2")
    expect(cells.nth(2).locator(".jp-OutputArea")).to_contain_text("answer 42")
    expect(cells.nth(0).locator(".jp-InputArea")).to_contain_text("base = 20  # my note")
    assert kernel_output(page, "print(answer)") == "42\n"  # it ran in the tab's kernel
    screenshot(page, "live_document_in_lab")

    saved = saved_notebook(root / "live.ipynb", lambda nb: len(nb.cells) == 3 and nb.cells[2].outputs
                           and "# my note" in nb.cells[0].source)
    assert saved.cells[0].source == "base = 20  # my note"
    assert "answer 42" in saved.cells[2].outputs[0]["text"]
    assert saved.cells[2].metadata["jupyter_brain"]["provenance"]["client"] == "live-agent"
