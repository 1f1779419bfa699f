"""The harness with memory: recalled memories go into the request's own layer (never the
history), one MemoryRecall event and TurnResult.memories; extraction runs after the turn
and is paid for; a failing retriever or extractor never breaks a turn."""

from __future__ import annotations

import pytest

from jupyter_brain.agent.cost import SessionCostTracker
from jupyter_brain.agent.events import ErrorEvent, EventLog, MemoryRecall, TurnEnd
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.history import history_problems
from jupyter_brain.agent.memory import Memory, SQLiteMemory
from jupyter_brain.agent.memory.recall import RECALL_HEADER, RECALL_K
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.scripted import ScriptedProvider

FACT = "revenue in the sales table is in US dollars"


@tool
def peek(column: str) -> str:
    """Look at a column of the sales table."""
    return f"{column}: 1200, 1300, 900"


def _harness(provider, log=None, **kw) -> AgentHarness:
    return AgentHarness(provider, AgentToolRegistry([peek]), log if log is not None else EventLog(":memory:"), **kw)


def _memory_messages(messages: list[dict]) -> list[dict]:
    return [m for m in messages if m.get("kind") == "memory"]


def _flat(messages: list[dict]) -> str:
    return repr(messages)


def test_recalled_memories_are_in_every_request_and_never_in_the_history() -> None:
    store = SQLiteMemory()
    store.add(FACT)
    store.add("the fiscal year starts in April")
    bot = ScriptedProvider([{"text": "checking", "tool_calls": [{"name": "peek", "arguments": {"column": "revenue"}}]},
                            "Revenue is in US dollars: 1,200 in January."])
    log = EventLog(":memory:")
    events: list = []
    result = _harness(bot, log, memory_retriever=store).run_turn(
        "s1", [], "What is the revenue of the sales table in January?", on_event=events.append)
    assert result.status == "completed", result.error
    # each request (both steps) carries the memory layer, after the system prompt
    for call in bot.calls:
        (layer,) = _memory_messages(call["messages"])
        assert layer["role"] == "system" and layer["content"].startswith(RECALL_HEADER)
        assert f"- [m1] {FACT}" in layer["content"] and "fiscal" not in layer["content"]
    # ... and none of the history, the result's messages or the stored history does
    for messages in (result.messages, result.new_messages, log.load_history("s1")):
        assert FACT not in _flat(messages) and not _memory_messages(messages)
    assert history_problems(result.messages, require_final_assistant=True) == []
    # the result and the one event say which memories the turn used
    assert [(m["id"], m["text"]) for m in result.memories] == [("m1", FACT)]
    assert result.memories[0]["score"] > 0 and result.memories[0]["source"] == "user"
    recalls = [e for e in events if isinstance(e, MemoryRecall)]
    assert len(recalls) == 1 and recalls[0].memories == result.memories
    assert [e.type for e in log.events(turn_id=result.turn_id)].count("memory_recall") == 1


def test_the_next_turn_recalls_afresh_and_its_history_stays_clean() -> None:
    store = SQLiteMemory()
    store.add(FACT)
    bot = ScriptedProvider(["first", "second"])
    harness = _harness(bot, memory_retriever=store)
    first = harness.run_turn("s1", [], "revenue of the sales table?")
    second = harness.run_turn("s1", first.messages, "and the fiscal year?")
    assert len(_memory_messages(bot.calls[0]["messages"])) == 1
    assert _memory_messages(bot.calls[1]["messages"]) == []  # nothing matches: no layer
    assert second.memories == [] and FACT not in _flat(second.messages)


def test_no_memories_found_means_no_layer_and_no_event() -> None:
    bot = ScriptedProvider(["hi"])
    events: list = []
    result = _harness(bot, memory_retriever=SQLiteMemory()).run_turn("s1", [], "hello there", on_event=events.append)
    assert result.memories == [] and not any(isinstance(e, MemoryRecall) for e in events)
    assert _memory_messages(bot.calls[0]["messages"]) == []


def test_at_most_k_memories_are_recalled() -> None:
    store = SQLiteMemory()
    for i in range(RECALL_K + 4):
        store.add(f"sales note {i}: stores report revenue")
    bot = ScriptedProvider(["ok"])
    result = _harness(bot, memory_retriever=store).run_turn("s1", [], "sales revenue notes?")
    assert len(result.memories) == RECALL_K
    assert _memory_messages(bot.calls[0]["messages"])[0]["content"].count("\n- [m") == RECALL_K


class _Broken:
    def retrieve(self, query: str, session_id: str, k: int) -> list[Memory]:
        raise RuntimeError("disk on fire")

    def extract(self, turn, session_id: str) -> list[Memory]:
        raise RuntimeError("extractor on fire")


def test_a_failing_retriever_is_reported_and_the_turn_goes_on() -> None:
    bot = ScriptedProvider(["fine"])
    events: list = []
    result = _harness(bot, memory_retriever=_Broken()).run_turn("s1", [], "revenue?", on_event=events.append)
    assert result.status == "completed" and result.text == "fine" and result.memories == []
    (error,) = [e for e in events if isinstance(e, ErrorEvent)]
    assert error.recoverable and error.kind == "memory" and "disk on fire" in error.message


def test_a_failing_extractor_does_not_break_the_turn(caplog) -> None:
    bot = ScriptedProvider(["fine"])
    log = EventLog(":memory:")
    result = _harness(bot, log, memory_extractor=_Broken()).run_turn("s1", [], "revenue?")
    assert result.status == "completed" and result.text == "fine"
    assert "extractor on fire" in caplog.text
    (record,) = log.records("memory_extraction")
    assert "extractor on fire" in record["error"] and record["memories"] == []


def test_auto_memory_across_two_sessions_with_its_cost_counted(tmp_path) -> None:
    """Session 1 learns a fact at its end; session 2 (a new harness, a new store object on
    the same folder: another kernel) recalls it."""
    bot = ScriptedProvider([
        "Revenue is in US dollars.",
        {"text": f"- {FACT}", "usage": {"input_tokens": 300, "output_tokens": 12}},  # the extraction call
    ], model="claude-sonnet-4-5")
    bot.name = "anthropic"  # priced like the real model (the scripted provider is free)
    log = EventLog(tmp_path / "events.sqlite")
    costs = SessionCostTracker()
    store = SQLiteMemory(tmp_path)
    harness = _harness(bot, log, cost_tracker=costs, **store.roles("auto", bot))
    first = harness.run_turn("s1", [], "What currency is the revenue of the sales table in?")
    assert first.status == "completed" and first.memories == []
    (kept,) = store.list()
    assert kept.text == FACT and kept.source == f"turn:s1/{first.turn_id}"
    # the extraction call is paid for: in the session's cost of that turn, and noted in the log
    turn_cost = costs.turn(first.turn_id)
    assert turn_cost is not None
    assert turn_cost.usage.input_tokens == first.input_tokens + 300
    assert turn_cost.usage.output_tokens == first.output_tokens + 12
    assert first.cost_usd is not None and turn_cost.cost_usd == pytest.approx(first.cost_usd + (300 * 3 + 12 * 15) / 1e6)
    (record,) = log.records("memory_extraction")
    assert record["memories"] == [kept.id] and record["input_tokens"] == 300 and record["cost_usd"] > 0
    # the extraction happened after the turn ended: it is not in the turn's events or history
    assert isinstance(log.events(turn_id=first.turn_id)[-1], TurnEnd)
    assert FACT not in _flat(first.messages)

    bot2 = ScriptedProvider(["Still US dollars."])
    later = _harness(bot2, EventLog(":memory:"), memory_retriever=SQLiteMemory(tmp_path))
    second = later.run_turn("s2", [], "Remind me: the revenue of the sales table, which currency?")
    assert [m["text"] for m in second.memories] == [FACT]
    assert FACT in _memory_messages(bot2.calls[0]["messages"])[0]["content"]


@pytest.mark.parametrize("mode", ["off", "manual"])
def test_without_an_extractor_nothing_is_asked_after_the_turn(mode: str) -> None:
    store = SQLiteMemory()
    bot = ScriptedProvider(["only answer"])
    _harness(bot, **store.roles(mode, bot)).run_turn("s1", [], "revenue?")
    assert len(bot.calls) == 1 and len(store) == 0


def test_one_sqlite_memory_as_both_roles() -> None:
    """The README's library use: ``SQLiteMemory(..., provider=...)`` recalls and extracts."""
    bot = ScriptedProvider(["Dollars.", f"- {FACT}", "Dollars again.", "NONE"])
    store = SQLiteMemory(provider=bot)
    harness = _harness(bot, memory_retriever=store, memory_extractor=store)
    first = harness.run_turn("s1", [], "revenue of the sales table: which currency?")
    assert [m.text for m in store.list()] == [FACT] and first.memories == []
    second = harness.run_turn("s1", first.messages, "again: revenue of the sales table?")
    assert [m["id"] for m in second.memories] == ["m1"] and len(store) == 1
    assert FACT not in repr(second.messages)
