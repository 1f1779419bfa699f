"""``%agent remember / memory / forget`` and ``AgentMagics.memory`` in a real (in-process)
IPython shell, with the scripted provider."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from jupyter_brain.agent.memory import SQLiteMemory
from jupyter_brain.providers.scripted import ScriptedProvider

FACT = "revenue in the sales table is in US dollars"


def line(sh, text: str):
    return sh.run_line_magic("agent", text)


def _memory_messages(bot: ScriptedProvider, call: int = 0) -> list[dict]:
    return [m for m in bot.calls[call]["messages"] if m.get("kind") == "memory"]


def test_remember_list_search_and_forget(shell, capsys, tmp_path) -> None:
    line(shell, f"remember {FACT}")
    line(shell, "remember the user's fiscal year starts in April")  # an apostrophe is no quote
    line(shell, 'remember "stores are numbered 1 to 40"')
    out = capsys.readouterr().out
    assert f"remembered m1: {FACT}" in out and "remembered m2: the user's fiscal year starts in April" in out
    assert "remembered m3: stores are numbered 1 to 40" in out
    assert "memory is off" in out  # the default: turns do not recall them yet
    line(shell, "remember Revenue in the sales table is in US dollars.")
    assert "already remembered as m1" in capsys.readouterr().out

    line(shell, "memory")
    out = capsys.readouterr().out
    assert "memory off · 3 memories (memory.sqlite beside the event log" in out
    assert all(f"m{i}" in out for i in (1, 2, 3)) and "user, " in out

    line(shell, "memory what's the fiscal year?")
    out = capsys.readouterr().out.splitlines()
    hits = [row for row in out if row.startswith("  m")]
    assert len(hits) == 1 and hits[0].split()[0] == "m2" and float(hits[0].split()[1]) > 0

    line(shell, "forget m2")
    assert "forgot m2: the user's fiscal year starts in April" in capsys.readouterr().out
    line(shell, "memory fiscal")
    assert "no memory matches 'fiscal'" in capsys.readouterr().out
    # kept in the data folder, for any later kernel
    assert [m.id for m in SQLiteMemory(tmp_path / ".jupyter_brain").list()] == ["m1", "m3"]


@pytest.mark.parametrize(("text", "needle"), [
    ("remember", "write the fact to keep"),
    ("remember   ", "write the fact to keep"),
    ("remember !!!", "needs some words"),
    ("forget", "the ids are in %agent memory"),
    ("forget m99", "no memory 'm99'"),
    ("forget revenue", "not a memory id"),
])
def test_bad_input_is_a_usage_error(shell, text: str, needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        line(shell, text)


def test_an_empty_memory_says_how_to_fill_it(shell, capsys) -> None:
    line(shell, "memory")
    assert "no memories yet: %agent remember TEXT" in capsys.readouterr().out


def test_help_lists_the_memory_subcommands(shell, capsys) -> None:
    line(shell, "help")
    out = capsys.readouterr().out
    assert "%agent remember TEXT" in out and "%agent memory [QUERY]" in out and "%agent forget ID" in out


def test_memory_off_by_default_sends_no_memories(shell) -> None:
    line(shell, f"remember {FACT}")
    bot = ScriptedProvider(["ok"])
    shell.user_ns["bot"] = bot
    shell.run_cell_magic("agent", "--provider bot", "What currency is revenue in the sales table?")
    assert _memory_messages(bot) == [] and shell.user_ns["_agent"].memories == []


def test_manual_recalls_but_never_extracts(shell, capsys) -> None:
    line(shell, f"remember {FACT}")
    shell.run_line_magic("config", 'AgentMagics.memory = "manual"')
    bot = ScriptedProvider(["Revenue is in US dollars."])
    shell.user_ns["bot"] = bot
    shell.run_cell_magic("agent", "--provider bot", "What currency is revenue in the sales table?")
    result = shell.user_ns["_agent"]
    assert [m["text"] for m in result.memories] == [FACT]
    assert FACT in _memory_messages(bot)[0]["content"]
    assert FACT not in repr(result.messages)
    assert len(bot.calls) == 1  # no extraction call
    out = capsys.readouterr().out
    assert "Memories used:" in out and f"[m1] {FACT}" in out  # the text view shows them


def test_auto_keeps_a_fact_that_a_new_session_recalls(shell, tmp_path) -> None:
    line(shell, "config memory=auto")
    assert shell.magics_manager.registry["AgentMagics"].memory == "auto"
    bot = ScriptedProvider(["Revenue is in US dollars.", f"- {FACT}", "Yes, US dollars."])
    shell.user_ns["bot"] = bot
    shell.run_cell_magic("agent", "--provider bot", "What currency is revenue in the sales table?")
    assert len(bot.calls) == 2 and bot.calls[1]["messages"][0]["kind"] == "memory_extraction"
    assert [m.text for m in SQLiteMemory(tmp_path / ".jupyter_brain").list()] == [FACT]
    shell.run_cell_magic("agent", "--provider bot --new --session other", "Revenue of the sales table: currency?")
    result = shell.user_ns["_agent"]
    assert result.session_id == "other" and [m["text"] for m in result.memories] == [FACT]


def test_a_bad_memory_value_is_refused(shell) -> None:
    with pytest.raises(UsageError):
        line(shell, "config memory=sometimes")
