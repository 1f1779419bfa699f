"""AGENTS.md and Agent Skills in a real (in-process) IPython shell with the scripted
provider: the layers of every request, %agent skills and %agent context, --skill forcing a
body in, load_skill and the file tools reading a skill's files, AgentMagics.agents_md, and
the replay fingerprint counting an edited AGENTS.md."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_brain.providers.replay.fingerprint import fingerprint
from jupyter_brain.providers.scripted import ScriptedProvider
from tests.conventions.tree import project


@pytest.fixture()
def nb_folder(shell, tmp_path, monkeypatch):
    _, notebook, home = project(tmp_path / "t")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(notebook)
    return notebook


def _kinds(call: dict) -> dict[str, str]:
    return {m["kind"]: m["content"] for m in call["messages"] if m.get("kind")}


def test_every_request_carries_the_nearest_agents_md_and_the_skill_index(shell, nb_folder) -> None:
    bot = ScriptedProvider([{"tool_calls": [{"name": "load_skill", "arguments": {"name": "plot-style"}}]},
                            {"tool_calls": [{"name": "read_file", "arguments": {
                                "path": "../../.agents/skills/plot-style/references/palette.md"}}]},
                            "done"])
    shell.user_ns["bot"] = bot
    shell.run_cell_magic("agent", "--provider bot", "chart q3 sales")
    assert len(bot.calls) == 3
    for call in bot.calls:  # fresh layers of every request
        kinds = _kinds(call)
        assert "Plot with seaborn." in kinds["agents_md"] and "polars" not in kinds["agents_md"]
        assert "- sql-review: Review SQL queries for joins." in kinds["skills"]
        assert "Use the palette" not in kinds["skills"]
    assert any(t["name"] == "load_skill" for t in bot.calls[0]["tools"])
    calls = shell.user_ns["_agent"].tool_calls
    assert [c.name for c in calls] == ["load_skill", "read_file"]
    assert "Use the palette in references/palette.md." in calls[0].output
    assert "blue #1f77b4" in calls[1].output  # a skill folder above the notebook is readable
    history = shell.magics_manager.registry["AgentMagics"].manager.current.history
    assert not any(m.get("kind") in ("agents_md", "skills") for m in history)  # never history


def test_file_tools_still_refuse_outside_the_skill_folders(shell, nb_folder) -> None:
    bot = ScriptedProvider([{"tool_calls": [{"name": "read_file", "arguments": {"path": "../../AGENTS.md"}}]}, "ok"])
    shell.user_ns["bot"] = bot
    shell.run_cell_magic("agent", "--provider bot", "read the repo rules")
    (call,) = shell.user_ns["_agent"].tool_calls
    assert call.status == "error" and "Refused path '../../AGENTS.md'" in (call.error or call.output)


def test_skill_flag_forces_an_agent_skill_body_in(shell, nb_folder) -> None:
    bot = ScriptedProvider(["ok"])
    shell.user_ns["bot"] = bot
    shell.run_cell_magic("agent", "--provider bot --skill sql-review", "check my query")
    assert "Do the thing step by step." in _kinds(bot.calls[0])["skill"]


def test_agent_skills_and_context_list_where_things_come_from(shell, nb_folder, capsys) -> None:
    shell.run_line_magic("agent", "skills")
    out = capsys.readouterr().out
    assert "  plot-style  House style for every chart.  [../../.agents/skills/plot-style]" in out
    assert "  commit-msg  Write commit messages.  [~/.claude/skills/commit-msg]" in out
    assert ("  skipped ../../.github/skills/wrong-folder/SKILL.md: name: 'other-name' must equal the folder's "
            "name 'wrong-folder'") in out
    assert "hidden by a nearer skill of the same name: plot-style: ~/.agents/skills/plot-style" in out
    shell.run_line_magic("agent", "context")
    out = capsys.readouterr().out
    assert "AGENTS.md: ../AGENTS.md (36 bytes); overrides ../../AGENTS.md" in out
    assert "Agent Skills offered: commit-msg, plot-style, sql-review; 6 left out (%agent skills)" in out


def test_agents_md_off_and_an_edit_changes_the_fingerprint(shell, nb_folder) -> None:
    bot = ScriptedProvider(["a", "b", "c"])
    shell.user_ns["bot"] = bot
    shell.run_cell_magic("agent", "--provider bot", "hi")
    (nb_folder.parent / "AGENTS.md").write_text("# Analysis rules\nPlot with plotly.\n", encoding="utf-8")
    shell.run_cell_magic("agent", "--provider bot --new", "hi")
    shell.run_line_magic("config", "AgentMagics.agents_md = False")
    shell.run_cell_magic("agent", "--provider bot --new", "hi")
    assert "Plot with plotly." in _kinds(bot.calls[1])["agents_md"]
    assert "agents_md" not in _kinds(bot.calls[2]) and "skills" in _kinds(bot.calls[2])
    prints = [fingerprint(call["messages"], call["tools"]).value for call in bot.calls]
    assert len(set(prints)) == 3  # an edited AGENTS.md, or none, is another request


def test_a_broken_skill_folder_never_stops_a_turn(shell, nb_folder) -> None:
    (Path(".agents/skills/empty")).mkdir(parents=True)
    (Path(".agents/skills/empty/SKILL.md")).write_bytes(b"\xff\xfe---\n\x00")
    bot = ScriptedProvider(["fine"])
    shell.user_ns["bot"] = bot
    shell.run_cell_magic("agent", "--provider bot", "hi")
    assert shell.user_ns["_agent"].text == "fine" and os.getcwd() == str(nb_folder.resolve())
