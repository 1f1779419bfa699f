"""``--top-k``, ``--citations``, ``--skill`` and ``%agent skills`` in a real (in-process)
IPython shell with the scripted provider; the runtime layer names the resolved provider."""

from __future__ import annotations

from pathlib import Path

import pytest
from IPython.core.error import UsageError

from jupyter_brain.providers.scripted import ScriptedProvider


def agent(sh, line, cell):
    return sh.run_cell_magic("agent", line, cell)


def _kinds(call: dict) -> dict[str, str]:
    return {m["kind"]: m["content"] for m in call["messages"] if m.get("kind")}


def test_top_k_and_citations_flags_reach_the_turn(shell, capsys) -> None:
    Path("pricing.md").write_text("# Pricing\n\nThe premium plan costs 49 euros.\n", encoding="utf-8")
    bot = ScriptedProvider(["The premium plan costs 49 euros (pricing.md)."])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot --top-k 3 --citations", "How much is the premium plan?")
    result = shell.user_ns["_agent"]
    assert "[pricing.md:1]" in _kinds(bot.calls[0])["context_pack"]
    assert result.context_pack_json["passages"][0]["anchor"] == "pricing.md:1"
    assert result.local_citations == ["pricing.md:1"]
    assert result.text.endswith("**Sources**\n\n- `pricing.md:1`")
    out = capsys.readouterr().out
    assert "Context pack: 1 passage (pricing.md:1)" in out and "Sources:\n  - pricing.md:1" in out


def test_kernel_defaults_and_no_flags(shell) -> None:
    Path("notes.md").write_text("premium tier", encoding="utf-8")
    bot = ScriptedProvider(["a", "b"])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot", "premium?")
    assert "context_pack" not in _kinds(bot.calls[0]) and shell.user_ns["_agent"].local_citations == []
    shell.run_line_magic("config", "AgentMagics.top_k = 2")
    shell.run_line_magic("config", "AgentMagics.citations = True")
    agent(shell, "--provider bot", "premium?")
    assert "context_pack" in _kinds(bot.calls[1]) and shell.user_ns["_agent"].local_citations == ["notes.md:1"]


def test_the_runtime_layer_names_the_resolved_provider(shell) -> None:
    bot = ScriptedProvider(["ok"], model="tiny-model")
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot", "hi")
    assert "tiny-model via scripted" in _kinds(bot.calls[0])["runtime"]


def test_skill_flag_loads_the_file_from_either_folder(shell) -> None:
    Path("skills").mkdir()
    Path("skills/haiku.md").write_text("# Haiku\nAnswer in a haiku.\n", encoding="utf-8")
    Path(".jupyter_brain/skills").mkdir(parents=True)
    Path(".jupyter_brain/skills/sql.md").write_text("Write ANSI SQL.", encoding="utf-8")
    Path("skills/sql.md").write_text("hidden by the data dir's sql", encoding="utf-8")
    bot = ScriptedProvider(["ok", "ok"])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot --skill haiku", "hi")
    assert _kinds(bot.calls[0])["skill"].endswith("# Haiku\nAnswer in a haiku.")
    agent(shell, "--provider bot --skill sql.md", "hi")
    assert _kinds(bot.calls[1])["skill"].endswith("Write ANSI SQL.")  # .jupyter_brain/skills wins


@pytest.mark.parametrize(("line", "needle"), [
    ("--skill nosuch", "no skill 'nosuch'"),
    ("--skill ../etc/passwd", "--skill needs a skill name"),
    ("--top-k -1", "must be 0 or more"),
    ("--top-k 500", "top_k: Input should be less than or equal to 50"),
])
def test_bad_flags_are_clear_usage_errors(shell, line, needle) -> None:
    Path("skills").mkdir()
    Path("skills/haiku.md").write_text("Answer in a haiku.", encoding="utf-8")
    bot = ScriptedProvider(["ok"])
    shell.user_ns["bot"] = bot
    with pytest.raises(UsageError) as info:
        agent(shell, f"--provider bot {line}", "hi")
    assert needle in str(info.value)
    if "nosuch" in line:
        assert "Available skills: haiku" in str(info.value)
    assert bot.calls == []  # refused before the turn


def test_agent_skills_lists_names_and_first_lines(shell, capsys) -> None:
    shell.run_line_magic("agent", "skills")
    assert "No skills yet" in capsys.readouterr().out
    Path("skills").mkdir()
    Path("skills/haiku.md").write_text("\n# Answer in a haiku\nmore\n", encoding="utf-8")
    Path("skills/sql.md").write_text("Write ANSI SQL.", encoding="utf-8")
    Path("skills/notes.txt").write_text("not a skill", encoding="utf-8")
    shell.run_line_magic("agent", "skills")
    out = capsys.readouterr().out
    assert "  haiku  Answer in a haiku\n" in out and "  sql    Write ANSI SQL.\n" in out
    assert "notes" not in out and "2 skills" in out
    with pytest.raises(UsageError, match="takes no arguments"):
        shell.run_line_magic("agent", "skills extra")
