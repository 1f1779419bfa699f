"""``ask`` for outside agents in real JupyterLab (issue #35): the MCP SDK's client, named
claude-code, calls insert_cell, execute_cell and edit_cell on the notebook the user has open,
under the endpoint's default permission. Each call waits on a card above the notebook: the
insert's diff, the cell's code; Approve inserts and runs it (in the tab's kernel), Deny gives
the agent the denial. Reloaded from disk, the inserted cell carries the "✎ claude-code" badge.
Screenshots: outside_approval_{insert,execute,dialog}.png, outside_provenance_badge{,_active}.png."""

from __future__ import annotations

import re
import threading
from typing import Any

import anyio
import pytest
from playwright.sync_api import expect

from ..server.jupyter import _reply
from .conftest import (
    WAIT_S,
    open_notebook,
    run_cell,
    screenshot,
    serve_endpoint_lab,
    wait_idle_after_run,
    write_notebook,
)

pytestmark = pytest.mark.browser
SOURCE = "answer = base * 2 + 2\nprint('answer', answer)"
CARD = ".jb-outside-approval .jb-approval"


@pytest.fixture(scope="module")
def ask_lab(tmp_path_factory):
    """A JupyterLab of its own with the endpoint under ``ask`` (the default), no autosave."""
    yield from serve_endpoint_lab(tmp_path_factory, "ask-lab", f"--JupyterBrainMCP.approval_timeout={WAIT_S}",
                                  autosave=False)


class Agent(threading.Thread):
    """The outside agent: the MCP SDK's client calling ``calls`` in order, in one session."""

    def __init__(self, endpoint: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
        super().__init__(daemon=True)
        self.endpoint, self.calls, self.replies, self.error = endpoint, calls, [], None

    def run(self) -> None:
        try:
            anyio.run(self._run)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc

    async def _run(self) -> None:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
        from mcp_types import Implementation

        async with httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=2 * WAIT_S)) as http:
            async with Client(streamable_http_client(self.endpoint, http_client=http),
                              client_info=Implementation(name="claude-code", version="2.1.0")) as client:
                for name, args in self.calls:
                    self.replies.append(_reply(await client.call_tool(name, args)))


def _card(page, tool: str):
    card = page.locator(CARD, has=page.locator(".jb-approval-tool", has_text=tool))
    expect(card).to_be_visible()
    return card


def test_ask_cards_approve_and_deny_an_outside_agents_calls(ask_lab, page) -> None:
    base, root = ask_lab.base, ask_lab.root
    write_notebook(root, "asked.ipynb", ["base = 20"])
    open_notebook(page, base, "asked.ipynb")
    run_cell(page, 0)
    wait_idle_after_run(page)
    page.wait_for_function("() => (document.body.dataset.jbApprovalsSynced || '').includes('asked.ipynb')")

    agent = Agent(base + "/jupyter-brain/mcp", [
        ("insert_cell", {"path": "asked.ipynb", "source": SOURCE}),
        ("execute_cell", {"path": "asked.ipynb", "index": -1}),
        ("edit_cell", {"path": "asked.ipynb", "index": 0, "source": "base = 0"}),
    ])
    agent.start()

    insert = _card(page, "insert_cell")
    expect(insert.locator(".jb-outside-client")).to_have_text("✎ claude-code")
    expect(insert.locator(".jb-approval-path")).to_have_text("asked.ipynb: insert a code cell at index 1")
    expect(insert.locator(".jb-diff-add")).to_have_text(["+answer = base * 2 + 2\n", "+print('answer', answer)\n"])
    screenshot(page, "outside_approval_insert", stable=CARD)
    insert.locator("button.jb-approve").click()

    execute = _card(page, "execute_cell")
    expect(execute.locator("pre.jb-outside-code")).to_have_text(SOURCE)
    screenshot(page, "outside_approval_execute", stable=CARD)
    execute.locator("button.jb-approve").click()

    edit = _card(page, "edit_cell")
    expect(edit.locator(".jb-diff-del")).to_have_text(["-base = 20\n"])
    edit.locator("button.jb-deny").click()
    expect(page.locator(CARD)).to_have_count(0)  # each card goes once its call is decided

    agent.join(WAIT_S)
    assert agent.error is None, repr(agent.error)
    inserted, executed, denied = agent.replies
    assert not inserted.is_error and "Inserted a code cell at index 1" in inserted.text
    assert not executed.is_error and "answer 42" in executed.text  # ran in the tab's kernel, where base is 20
    assert denied.is_error and denied.text.startswith("edit_cell denied: the user (")

    page.evaluate("() => window.jupyterapp.shell.currentWidget.context.revert()")  # File → Reload from Disk
    page.wait_for_function("() => document.querySelectorAll('.jp-Notebook .jp-Cell').length === 2")
    cells = page.locator(".jp-Notebook .jp-Cell")
    expect(cells.nth(0).locator(".jp-InputArea")).to_contain_text("base = 20")  # the denied edit did not land
    badge = cells.nth(1).locator(".jb-provenance-badge")
    expect(badge).to_have_text("✎ claude-code")
    assert "MCP session" in badge.get_attribute("title") and "insert_cell" in badge.get_attribute("title")
    expect(cells.nth(0).locator(".jb-provenance-badge")).to_have_count(0)
    expect(cells.nth(1).locator(".jp-OutputArea")).to_contain_text("answer 42")
    screenshot(page, "outside_provenance_badge")
    page.evaluate("() => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = 1; }")
    expect(cells.nth(1)).to_have_class(re.compile("jp-mod-active"))
    screenshot(page, "outside_provenance_badge_active")  # the badge left of the cell's toolbar


def test_a_notebook_no_tab_shows_is_asked_in_a_dialog(ask_lab, page) -> None:
    base, root = ask_lab.base, ask_lab.root
    write_notebook(root, "open.ipynb", ["x = 1"])
    open_notebook(page, base, "open.ipynb")
    page.wait_for_function("() => (document.body.dataset.jbApprovalsSynced || '').includes('open.ipynb')")
    agent = Agent(base + "/jupyter-brain/mcp", [("create_notebook", {"path": "made.ipynb"})])
    agent.start()

    dialog = page.locator(".jp-Dialog", has=page.locator(".jb-outside-approval"))
    expect(dialog.locator(".jp-Dialog-header")).to_have_text("claude-code asks to create the notebook made.ipynb")
    expect(dialog.locator(".jb-approval-tool")).to_have_text("create_notebook")
    expect(dialog.locator(".jb-approval-path")).to_have_text("create the notebook made.ipynb")  # the path once
    screenshot(page, "outside_approval_dialog", stable=".jp-Dialog-content")
    dialog.locator("button.jp-mod-accept").click()
    agent.join(WAIT_S)
    assert agent.error is None, repr(agent.error)
    assert not agent.replies[0].is_error and "Created made.ipynb" in agent.replies[0].text
    assert (root / "made.ipynb").is_file()
