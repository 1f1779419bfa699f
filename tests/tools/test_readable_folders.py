"""``WorkspaceRoot(readable=...)``: the read tools may read an Agent Skill's folder outside
the workspace (above it, or in the home folder), and nothing else there; the write tools
never; a symlink inside the skill folder pointing out is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_brain.agent.tools import ToolError
from jupyter_brain.tools import WorkspaceRoot, file_tools, write_tools


@pytest.fixture()
def tree(tmp_path, monkeypatch):
    home = tmp_path / "home"
    skill = home / ".claude/skills/plot-style"
    (skill / "scripts").mkdir(parents=True)
    (skill / "scripts/style.py").write_text("STYLE = 'house'\n", encoding="utf-8")
    (home / "secret.txt").write_text("no", encoding="utf-8")
    (skill / "scripts/escape.txt").symlink_to(home / "secret.txt")
    notebook = home / "repo/nb"
    notebook.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return WorkspaceRoot(notebook, readable=[skill]), skill, notebook


def test_a_skill_folder_is_readable_by_relative_home_or_absolute_path(tree):
    root, skill, _ = tree
    tools = {t.name: t for t in file_tools(root)}
    for path in ("../../.claude/skills/plot-style/scripts/style.py", "~/.claude/skills/plot-style/scripts/style.py",
                 str(skill / "scripts/style.py")):
        assert "STYLE = 'house'" in tools["read_file"].fn(path=path)
    assert "style.py" in tools["list_files"].fn(path="~/.claude/skills/plot-style/scripts")


@pytest.mark.parametrize("path", ["../../secret.txt", "~/secret.txt", "~/.claude/skills/plot-style/scripts/escape.txt",
                                  "../../.claude/skills/../secret.txt"])
def test_nothing_else_outside_is_readable(tree, path):
    root, _, _ = tree
    with pytest.raises(ToolError, match="Refused path"):
        root.resolve_readable(path)


def test_the_write_tools_never_write_there(tree):
    root, skill, _ = tree
    write = {t.name: t for t in write_tools(root, None)}["write_file"]
    with pytest.raises(ToolError, match="Refused path"):
        write.fn(path="../../.claude/skills/plot-style/scripts/style.py", content="x")
    assert (skill / "scripts/style.py").read_text(encoding="utf-8") == "STYLE = 'house'\n"
    assert Path(root.resolve("x.txt")).parent == root.root
