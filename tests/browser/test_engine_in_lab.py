"""``%%agent --engine claude-code`` in real JupyterLab (issue #36): the real claude-code-acp,
its model a scripted local Messages server, asks to edit a file; the approval card shows
the diff while the cell runs, a click on Approve reaches the agent, the edit is made and the
timeline shows it as a diff."""

from __future__ import annotations

import pytest

from ..engines.conftest import agent_bin, agent_env
from ..engines.scripted_claude import ScriptedClaude, text, tool_use
from .conftest import open_and_run, screenshot, wait_idle_after_run, write_notebook

pytestmark = pytest.mark.browser


def test_the_agents_permission_request_is_the_approval_card(lab, page, tmp_path):
    agent_bin()
    base, root = lab
    target = root / "notes.txt"
    target.write_text("revenue rose in March\n")
    claude = ScriptedClaude()
    claude.push([text("I will read the notes."), tool_use("mcp__acp__Read", {"file_path": str(target)}, "toolu_r")],
                [tool_use("mcp__acp__Edit", {"file_path": str(target), "old_string": "rose",
                                             "new_string": "fell"}, "toolu_e")],
                [text("The notes now say that revenue **fell** in March.")])
    home = tmp_path / "home"
    home.mkdir()
    setup = ("%load_ext jupyter_brain\nimport os, tempfile\n%config AgentMagics.data_dir = tempfile.mkdtemp()\n"
             f"os.environ.update({agent_env(claude.url, home)!r})")
    try:
        write_notebook(root, "engine.ipynb", [setup, "%%agent --engine claude-code --permission ask\n"
                                                     "In notes.txt, revenue fell in March: fix it."])
        open_and_run(page, base, "engine.ipynb")
        card = page.wait_for_selector(".jb-approval.jb-pending")
        diff = page.evaluate("() => [...document.querySelectorAll('.jb-approval .jb-diff-add')].map(e => e.textContent)")
        assert any("fell" in d for d in diff), diff
        card.scroll_into_view_if_needed()
        screenshot(page, "engine_claude_code_card")
        page.click(".jb-approval.jb-pending .jb-approve")
        page.wait_for_selector(".jb-approval.jb-approved")
        wait_idle_after_run(page)
        page.wait_for_selector(".jb-turn-end")
        assert target.read_text() == "revenue fell in March\n"
        page.wait_for_function("() => document.body.textContent.includes('revenue fell in March.')")
        screenshot(page, "engine_claude_code_done")
    finally:
        claude.stop()
