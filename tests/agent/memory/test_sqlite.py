"""SQLiteMemory: storing, BM25 recall, forgetting, and memories that outlive the object."""

from __future__ import annotations

import threading

import pytest

from jupyter_brain.agent.memory import Memory, MemoryExtractor, MemoryRetriever, SQLiteMemory
from jupyter_brain.agent.memory.sqlite import FILE_NAME, memory_id

FACTS = [
    "revenue in the sales table is in US dollars",
    "the fiscal year starts in April",
    "the sales table has one row per store and month",
    "the user prefers bar charts over pie charts",
    "store 17 closed in March 2023 for renovation",
]


@pytest.fixture()
def store() -> SQLiteMemory:
    memory = SQLiteMemory()
    for fact in FACTS:
        memory.add(fact)
    return memory


def test_it_plays_both_roles() -> None:
    memory = SQLiteMemory()
    assert isinstance(memory, MemoryRetriever) and isinstance(memory, MemoryExtractor)


def test_add_returns_the_memory_with_an_id(store: SQLiteMemory) -> None:
    memory = store.add("  the   target is\n 5% growth ", source="user", session_id="s1")
    assert isinstance(memory, Memory)
    assert memory.id == "m6" and memory.text == "the target is 5% growth" and memory.source == "user"
    assert store.get("m6") == memory and store.get(6) == memory
    assert [m.text for m in store.list()] == [*FACTS, "the target is 5% growth"]
    assert [m.id for m in store.list(2)] == ["m5", "m6"]


def test_the_same_fact_again_is_the_memory_already_kept(store: SQLiteMemory) -> None:
    again = store.add("The fiscal year starts in April!")
    assert again.id == "m2" and again.text == "the fiscal year starts in April"
    assert len(store) == len(FACTS)


@pytest.mark.parametrize("text", ["", "   ", "!!!", "x" * 501])
def test_bad_text_is_a_clear_error(text: str) -> None:
    with pytest.raises(ValueError, match="memory"):
        SQLiteMemory().add(text)


def test_api_keys_are_masked_before_they_are_stored() -> None:
    store = SQLiteMemory()
    memory = store.add("the key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789")
    assert "abcdefghijklmnop" not in memory.text and "abcdefghijklmnop" not in store.list()[0].text


def test_retrieve_ranks_by_bm25(store: SQLiteMemory) -> None:
    found = store.retrieve("Which currency is the revenue of the sales table in?", "s", 5)
    assert found[0].text == FACTS[0]
    assert all(a.score >= b.score for a, b in zip(found, found[1:], strict=False))
    assert all(m.score > 0 for m in found)
    # only memories sharing a word with the query come back
    assert {m.text for m in found} <= {FACTS[0], FACTS[2]}


def test_a_rare_word_outranks_a_common_one(store: SQLiteMemory) -> None:
    store.add("the sales table is refreshed every monday")
    found = store.retrieve("when is the sales table refreshed?", "s", 2)
    assert found[0].text == "the sales table is refreshed every monday"


def test_retrieve_respects_k_and_empty_queries(store: SQLiteMemory) -> None:
    assert len(store.retrieve("sales table store month revenue", "s", 1)) == 1
    assert store.retrieve("the of and", "s", 5) == []  # stop words only
    assert store.retrieve("sales", "s", 0) == []
    assert store.retrieve("quantum chromodynamics", "s", 5) == []
    assert SQLiteMemory().retrieve("sales", "s", 5) == []


def test_search_is_retrieve_for_any_session(store: SQLiteMemory) -> None:
    assert store.search("pie charts") == store.retrieve("pie charts", "other", 10)
    assert store.search("pie charts")[0].text == FACTS[3]


def test_forget(store: SQLiteMemory) -> None:
    assert store.forget("m2") is True
    assert store.forget("m2") is False
    assert store.retrieve("fiscal year April", "s", 5) == []
    assert len(store) == len(FACTS) - 1
    with pytest.raises(ValueError, match="not a memory id"):
        store.forget("fiscal")


@pytest.mark.parametrize(("given", "rowid"), [("m12", 12), ("M3", 3), ("7", 7), (8, 8), ("#4", 4)])
def test_memory_ids(given: object, rowid: int) -> None:
    assert memory_id(given) == rowid  # type: ignore[arg-type]


def test_memories_outlive_the_object_and_are_shared_by_two_on_one_folder(tmp_path) -> None:
    first = SQLiteMemory(tmp_path / ".jupyter_brain")
    first.add("revenue is in US dollars", source="turn:s1/abc")
    assert (tmp_path / ".jupyter_brain" / FILE_NAME).exists()
    second = SQLiteMemory(tmp_path / ".jupyter_brain")  # another kernel of the same folder
    found = second.retrieve("revenue currency", "s2", 5)
    assert [(m.text, m.source) for m in found] == [("revenue is in US dollars", "turn:s1/abc")]
    # a write by one is seen by the other's next recall (its cached tokens are refreshed)
    second.add("the fiscal year starts in April")
    assert [m.text for m in first.retrieve("fiscal year", "s1", 5)] == ["the fiscal year starts in April"]
    first.forget(found[0].id)
    assert second.retrieve("revenue", "s2", 5) == []
    first.close()
    second.close()
    reopened = SQLiteMemory(tmp_path / ".jupyter_brain" / FILE_NAME)  # the file itself works too
    assert [m.text for m in reopened.list()] == ["the fiscal year starts in April"]


def test_threads_can_share_one_store() -> None:
    store = SQLiteMemory()
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(20):
                store.add(f"fact number {n} {i} about sales")
                store.retrieve("sales fact", "s", 3)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(store) == 80


def test_roles_per_mode() -> None:
    from jupyter_brain.providers.scripted import ScriptedProvider

    store, bot = SQLiteMemory(), ScriptedProvider([])
    assert store.roles("off", bot) == {}
    assert store.roles("manual", bot) == {"memory_retriever": store}
    auto = store.roles("auto", bot)
    assert auto["memory_retriever"] is store and auto["memory_extractor"].provider is bot
    assert auto["memory_extractor"].store is store
    with pytest.raises(ValueError, match="off, manual, auto"):
        store.roles("sometimes", bot)


def test_memory_modes_are_the_settings_choices() -> None:
    from jupyter_brain.agent.memory.sqlite import MEMORY_MODES
    from jupyter_brain.settings import SETTINGS

    assert SETTINGS["memory"].allowed() == MEMORY_MODES
