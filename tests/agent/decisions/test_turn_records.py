"""One decision record per turn, written by AgentHarness.after_turn (agent/decisions/hooks.py
and record.py), for an answer, an error and a max_steps turn; a failing store or learner
never breaks the turn."""

from __future__ import annotations

import logging

import pytest

from jupyter_brain.agent.decisions import RuntimeDecisionRecord, SQLiteDecisionStore
from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.base import ProviderError
from jupyter_brain.providers.scripted import ScriptedProvider


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool
def broken(key: str) -> str:
    """Always fails."""
    raise ValueError("no such key")


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


@pytest.fixture()
def log():
    with EventLog(":memory:") as event_log:
        yield event_log


def make(log, responses, **kwargs):
    store = kwargs.pop("decision_store", None) or SQLiteDecisionStore(log)
    harness = AgentHarness(ScriptedProvider(responses, model="scripted-1"), AgentToolRegistry([lookup, broken]),
                           log, decision_store=store, **kwargs)
    return harness, store


def test_a_completed_turn_records_what_was_chosen_and_what_came_of_it(log):
    harness, store = make(
        log,
        [{"text": "", "tool_calls": [call("lookup", key="a"), call("broken", key="b")],
          "usage": {"input_tokens": 100, "output_tokens": 10}},
         {"text": "a is value of a", "usage": {"input_tokens": 150, "output_tokens": 5}}],
        strategy="react", think_level="medium", prompt_id="nb.analyst", prompt_version="1.2.0",
        prompt_tags=frozenset({"b", "a"}), run_context_metadata={"notebook": "sales.ipynb"},
    )
    result = harness.run_turn("sess", [], "what is a?")
    (record,) = store.records()
    assert isinstance(record, RuntimeDecisionRecord)
    assert (record.session_id, record.turn_id, record.kind) == ("sess", result.turn_id, "turn")
    assert (record.provider, record.model) == ("scripted", "scripted-1")
    assert (record.strategy, record.think_level) == ("ReAct", "medium")
    assert record.tools_offered == ["lookup", "broken", "read_artifact"]
    assert record.tools_used == ["lookup", "broken"]
    assert record.detail["tools_failed"] == ["broken"] and record.detail["tool_calls"] == 2
    assert (record.steps, record.status) == (2, "completed")
    assert record.stop_reason == "answered after 2 tool calls"
    assert (record.input_tokens, record.output_tokens) == (result.input_tokens, result.output_tokens) != (0, 0)
    assert record.cost_usd == result.cost_usd and record.duration_s == result.duration_s
    assert record.prompt == {"prompt_id": "nb.analyst", "prompt_version": "1.2.0", "prompt_tags": ["a", "b"],
                             "prompt_render_hash": result.prompt_render_hash}
    assert record.run_context == {"notebook": "sales.ipynb"}


def test_one_record_per_turn_in_order(log):
    harness, store = make(log, ["one", "two", "three"])
    history: list = []
    turn_ids = []
    for prompt in ("first", "second", "third"):
        result = harness.run_turn("sess", history, prompt)
        history = result.messages
        turn_ids.append(result.turn_id)
    assert [r.turn_id for r in store.records("sess")] == turn_ids
    assert all(r.status == "completed" and r.stop_reason == "answered" for r in store.records())


def test_an_error_turn_says_why_with_secrets_masked(log):
    key = "sk-ant-api03-" + "x" * 30
    harness, store = make(log, [ProviderError(f"bad request with key {key}", kind="bad_request")])
    result = harness.run_turn("sess", [], "q")
    assert result.status == "error"
    (record,) = store.records()
    assert record.status == "error" and record.steps == 0
    assert record.stop_reason == "error: bad_request error: bad request with key [REDACTED]"


def test_a_max_steps_turn_says_it_hit_the_limit(log):
    harness, store = make(log, [{"text": f"step {i}", "tool_calls": [call("lookup", key=str(i))]} for i in range(3)],
                          max_steps=2)
    result = harness.run_turn("sess", [], "loop")
    assert result.status == "max_steps"
    (record,) = store.records()
    assert (record.status, record.steps) == ("max_steps", 2)
    assert record.stop_reason == "reached the step limit (2 steps) before an answer"
    assert record.tools_used == ["lookup"]


class FailingStore:
    def __init__(self):
        self.calls = 0

    def record(self, record):
        self.calls += 1
        raise OSError("disk full")


class FailingLearner:
    def observe(self, turn):
        raise RuntimeError("learner bug")

    def tool_boosts(self, question):
        raise RuntimeError("learner bug")


def test_a_failing_store_or_learner_does_not_break_the_turn(log, caplog):
    failing = FailingStore()
    harness, _ = make(log, ["fine", "again"], decision_store=failing, autonomous_research_learner=FailingLearner(),
                      enable_semantic_selection=True, max_tools_per_turn=1)
    with caplog.at_level(logging.WARNING, logger="jupyter_brain.decisions"):
        result = harness.run_turn("sess", [], "q")
        again = harness.run_turn("sess", result.messages, "q2")
    assert (result.status, result.text, again.status) == ("completed", "fine", "completed")
    assert failing.calls == 2
    messages = [r.getMessage() for r in caplog.records]
    assert any("decision store failed" in m and "disk full" in m for m in messages)
    assert any("learner failed to observe" in m for m in messages)
    assert any("tool learner failed" in m for m in messages)


def test_no_store_no_records(log):
    store = SQLiteDecisionStore(log)
    harness = AgentHarness(ScriptedProvider(["ok"]), AgentToolRegistry([lookup]), log)
    harness.run_turn("sess", [], "q")
    assert store.records() == []
