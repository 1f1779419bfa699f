"""Extraction: the model names durable facts in a strict format; new ones are kept once."""

from __future__ import annotations

import pytest

from jupyter_brain.agent.memory import ModelMemoryExtractor, SQLiteMemory
from jupyter_brain.agent.memory.base import Memory
from jupyter_brain.agent.memory.extractor import EXTRACTION_KIND, parse_facts, repeats
from jupyter_brain.agent.results import TurnResult
from jupyter_brain.providers.base import Usage
from jupyter_brain.providers.scripted import ScriptedProvider


def _turn(question: str = "What currency is revenue in?", answer: str = "Revenue is in US dollars.",
          status: str = "completed") -> TurnResult:
    messages = [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    return TurnResult(session_id="s1", turn_id="t1", status=status, text=answer,  # type: ignore[arg-type]
                      messages=messages, new_messages=messages)


@pytest.mark.parametrize(("reply", "facts"), [
    ("- revenue is in US dollars\n- the fiscal year starts in April",
     ["revenue is in US dollars", "the fiscal year starts in April"]),
    ("NONE", []),
    ("none.", []),
    ("", []),
    ("Here are the facts:\n* revenue is in US dollars\nI hope this helps!", ["revenue is in US dollars"]),
    ("1. revenue is in US dollars\n2) stores are numbered 1-40", ["revenue is in US dollars", "stores are numbered 1-40"]),
    ("- `revenue is in US dollars`\n- Revenue is in US dollars.", ["revenue is in US dollars"]),  # repeats in one reply
    ("- ok\n- " + "x " * 300 + "\n- none", []),  # too short, too long, a bullet saying none
    ("revenue is in US dollars", []),  # not the format: nothing
])
def test_parse_facts(reply: str, facts: list[str]) -> None:
    assert parse_facts(reply) == facts


def test_parse_facts_keeps_at_most_max() -> None:
    reply = "\n".join(f"- fact number {i} about the data" for i in range(9))
    assert len(parse_facts(reply, max_facts=3)) == 3


def test_repeats() -> None:
    kept = [Memory(id="m1", text="revenue in the sales table is in US dollars")]
    assert repeats("Revenue in the sales table is in US dollars.", kept)
    assert repeats("revenue of the sales table is in US dollars", kept)
    assert not repeats("costs in the sales table are in euros", kept)


def test_extract_keeps_the_new_facts_with_their_turn_as_source() -> None:
    store = SQLiteMemory()
    bot = ScriptedProvider(["- revenue in the sales table is in US dollars\n- the fiscal year starts in April"])
    extractor = ModelMemoryExtractor(store, bot)
    kept = extractor.extract(_turn(), "s1")
    assert [m.text for m in kept] == ["revenue in the sales table is in US dollars", "the fiscal year starts in April"]
    assert all(m.source == "turn:s1/t1" for m in kept)
    assert [m.text for m in store.list()] == [m.text for m in kept]
    # the request: the extraction instructions, then the exchange as data
    (call,) = bot.calls
    system, user = call["messages"]
    assert system["kind"] == EXTRACTION_KIND and "NONE" in system["content"]
    assert "What currency is revenue in?" in user["content"] and "Revenue is in US dollars." in user["content"]
    assert call["tools"] == []
    assert extractor.last_usage is not None and extractor.last_usage.output_tokens > 0 and extractor.calls == 1


def test_extract_skips_what_is_already_remembered_and_shows_it_to_the_model() -> None:
    store = SQLiteMemory()
    store.add("revenue in the sales table is in US dollars")
    bot = ScriptedProvider(["- Revenue in the sales table is in US dollars.\n- stores report revenue monthly"])
    kept = ModelMemoryExtractor(store, bot).extract(_turn(), "s1")
    assert [m.text for m in kept] == ["stores report revenue monthly"]
    assert len(store) == 2
    assert "Already remembered:\n- revenue in the sales table is in US dollars" in bot.calls[0]["messages"][1]["content"]


@pytest.mark.parametrize("turn", [_turn(status="error"), _turn(status="interrupted"), _turn(answer="  ")])
def test_unfinished_turns_are_not_read(turn: TurnResult) -> None:
    bot = ScriptedProvider(["- revenue is in US dollars"])
    assert ModelMemoryExtractor(SQLiteMemory(), bot).extract(turn, "s1") == []
    assert bot.calls == []


def test_a_failing_model_keeps_nothing_and_says_why(caplog) -> None:
    store = SQLiteMemory()
    extractor = ModelMemoryExtractor(store, ScriptedProvider([{"error": {"message": "overloaded", "kind": "overloaded"}}]))
    assert extractor.extract(_turn(), "s1") == []
    assert "overloaded" in (extractor.last_error or "") and extractor.last_usage is None
    assert len(store) == 0 and "memory extraction failed" in caplog.text


def test_model_output_cannot_store_a_key() -> None:
    store = SQLiteMemory()
    bot = ScriptedProvider(["- the project key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"])
    kept = ModelMemoryExtractor(store, bot).extract(_turn(), "s1")
    assert kept and "abcdefghijklmnop" not in kept[0].text


def test_sqlite_memory_extract_uses_its_provider() -> None:
    assert SQLiteMemory().extract(_turn(), "s1") == []  # no provider: nothing, no call
    store = SQLiteMemory(provider=ScriptedProvider([{"text": "- the fiscal year starts in April",
                                                     "usage": {"input_tokens": 120, "output_tokens": 9}}]))
    assert [m.text for m in store.extract(_turn(), "s1")] == ["the fiscal year starts in April"]
    assert store.last_usage == Usage(input_tokens=120, output_tokens=9)
