"""ReflectionEngine and ReflectionResult (reference: reflection_engine.md)."""

from __future__ import annotations

import copy
import logging

import pytest

from jupyter_brain.agent.budget import TurnBudget
from jupyter_brain.agent.callbacks import AgentCallbacks
from jupyter_brain.agent.reflection import _REFLECTION_SYSTEM, ReflectionEngine, ReflectionResult
from jupyter_brain.agent.thinking import ThinkingConfig, ThinkingManager, ThinkLevel
from jupyter_brain.providers.base import ProviderError, ProviderResult, Usage


class FakeClock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


class RecordingProvider:
    name = "fake"
    model = "fake-1"

    def __init__(self, text="All good so far.\nConfidence: 0.9\nNext: check the nulls", exc=None, usage=None):
        self.text = text
        self.exc = exc
        self.usage = usage or Usage(input_tokens=11, output_tokens=7)
        self.calls: list[dict] = []

    def generate(self, messages, tools, *, timeout_s=60.0, thinking_budget=0):
        self.calls.append({"messages": copy.deepcopy(messages), "tools": tools, "timeout_s": timeout_s})
        if self.exc is not None:
            raise self.exc
        return ProviderResult(text=self.text, usage=self.usage)


def make(level=ThinkLevel.MEDIUM, provider=None, callbacks=None, **cfg):
    manager = ThinkingManager(ThinkingConfig(level=level, **cfg))
    manager.on_turn_start()
    provider = provider or RecordingProvider()
    return ReflectionEngine(provider, manager, callbacks), manager, provider


MSGS = [{"role": "user", "content": "How many rows have a null price?"}]
RESULTS = [{"name": "describe", "status": "error", "output": "KeyError: 'price'"}]


# ── ReflectionResult ─────────────────────────────────────────────────────────


def test_result_defaults_and_to_dict():
    r = ReflectionResult("text")
    assert (r.should_continue, r.suggested_action, r.confidence) == (True, None, 0.7)
    assert r.to_dict() == {
        "reflection": "text",
        "should_continue": True,
        "suggested_action": None,
        "confidence": 0.7,
    }


# ── should_reflect delegates ─────────────────────────────────────────────────


def test_should_reflect_delegates_to_manager():
    engine, manager, _ = make()
    assert not engine.should_reflect()
    manager.on_tool_error("boom")
    assert engine.should_reflect()
    off_engine, off_manager, _ = make(ThinkLevel.OFF)
    off_manager.on_tool_error("boom")
    assert not off_engine.should_reflect()


# ── budget gate ──────────────────────────────────────────────────────────────


def test_budget_exhausted_after_four_claims_by_default():
    engine, manager, provider = make()
    budget = TurnBudget(timeout_s=60)
    texts = [engine.reflect(MSGS, RESULTS, budget).reflection for _ in range(6)]
    assert texts[:4] == ["All good so far.\nConfidence: 0.9\nNext: check the nulls"] * 4
    assert texts[4:] == ["[budget exhausted]"] * 2
    assert len(provider.calls) == 4  # no model call for a stub


def test_budget_exhausted_stub_shape():
    engine, manager, provider = make()
    budget = TurnBudget(max_reflections=0)
    manager.on_tool_error("boom")
    r = engine.reflect(MSGS, RESULTS, budget)
    assert r.reflection == "[budget exhausted]" and r.should_continue is True
    assert provider.calls == []
    assert manager.last_reflection is None  # the engine records only real reflections
    assert manager.tool_errors == ["boom"]


def test_deadline_expired_with_fake_clock():
    clock = FakeClock()
    budget = TurnBudget(timeout_s=10, clock=clock)
    engine, manager, provider = make()
    clock.t += 10  # exactly at the deadline
    r = engine.reflect(MSGS, RESULTS, budget)
    assert r.reflection == "[deadline expired]" and r.should_continue is True
    assert provider.calls == []
    # the slot was claimed first (reference order: claim, then check expiry)
    assert budget.reflections == 1


def test_budget_checked_before_deadline():
    clock = FakeClock()
    budget = TurnBudget(timeout_s=10, max_reflections=0, clock=clock)
    clock.t += 100
    engine, _, _ = make()
    assert engine.reflect(MSGS, RESULTS, budget).reflection == "[budget exhausted]"


# ── the model call ───────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("remaining", "expected"),
    [(100.0, 30), (30.0, 30), (29.9, 29), (12.7, 12), (5.0, 5), (4.0, 5), (0.5, 5)],
)
def test_timeout_is_min_30_max_5_remaining(remaining, expected):
    clock = FakeClock()
    budget = TurnBudget(timeout_s=remaining, clock=clock)
    engine, _, provider = make()
    engine.reflect(MSGS, RESULTS, budget)
    assert provider.calls[0]["timeout_s"] == expected


def test_provider_called_with_no_tools_and_reflection_messages():
    engine, manager, provider = make()
    manager.on_tool_error("KeyError: 'price'")
    expected_prompt = manager.get_reflection_prompt(MSGS, RESULTS)
    engine.reflect(MSGS, RESULTS, TurnBudget())
    (call,) = provider.calls
    assert call["tools"] == []
    system, user = call["messages"]
    assert system["role"] == "system" and system["content"] == _REFLECTION_SYSTEM
    assert system.get("kind") == "reflection"
    assert user["role"] == "user"
    assert user["content"] == expected_prompt
    assert "What has been accomplished so far?" in user["content"]
    assert "How many rows have a null price?" in user["content"]
    assert "describe [error]" in user["content"]


def test_prompt_built_before_errors_are_cleared():
    engine, manager, provider = make()
    manager.on_tool_error("KeyError: 'price'")
    engine.reflect(MSGS, [], TurnBudget())
    assert "Note: the most recent tool error was: KeyError: 'price'" in provider.calls[0]["messages"][1]["content"]


def test_result_parsed_confidence_and_suggested_action():
    engine, _, _ = make()
    r = engine.reflect(MSGS, RESULTS, TurnBudget())
    assert r.confidence == pytest.approx(0.9)
    assert r.suggested_action == "check the nulls"
    assert r.should_continue is True
    assert r.usage == Usage(input_tokens=11, output_tokens=7)


@pytest.mark.parametrize(
    ("text", "confidence", "action"),
    [
        ("Fine.", 0.7, None),
        ("confidence = .35", 0.35, None),
        ("CONFIDENCE: 1", 1.0, None),
        ("Confidence: 0", 0.0, None),
        ("Looks ok.\nSuggested action: rerun with dropna()", 0.7, "rerun with dropna()"),
        ("  next: read the file\nconfidence: 0.4", 0.4, "read the file"),
        ("**Confidence:** 0.8\n- **Next:** read the file", 0.8, "read the file"),
        ("**Confidence**: 0.65\n**Next**: drop nulls  ", 0.65, "drop nulls"),
        ("Confidence: 85%", 0.85, None),
        ("Confidence: 85", 0.85, None),
        ("Confidence: 0.9.", 0.9, None),
        ("Confidence: 250", 1.0, None),
        ("Confidence: 1.5", 1.0, None),
        ("Confidence: 100%", 1.0, None),
        ("Next steps: none\nNo confidence given", 0.7, None),
    ],
)
def test_parsing_variants(text, confidence, action):
    engine, _, _ = make(provider=RecordingProvider(text=text))
    r = engine.reflect(MSGS, [], TurnBudget())
    assert r.confidence == pytest.approx(confidence)
    assert r.suggested_action == action


def test_text_is_stripped():
    engine, _, _ = make(provider=RecordingProvider(text="\n  ok  \n"))
    assert engine.reflect(MSGS, [], TurnBudget()).reflection == "ok"


def test_callback_fired_and_manager_records():
    seen = []
    engine, manager, _ = make(callbacks=AgentCallbacks(on_reflection=seen.append))
    manager.on_tool_error("boom")
    r = engine.reflect(MSGS, RESULTS, TurnBudget())
    assert seen == [r]
    assert manager.last_reflection is r
    assert manager.tool_errors == []
    assert not manager.should_reflect()


def test_raising_callback_does_not_break_reflection(caplog):
    def bad(_):
        raise RuntimeError("ui bug")

    engine, manager, _ = make(callbacks=AgentCallbacks(on_reflection=bad))
    with caplog.at_level(logging.ERROR, logger="jupyter_brain.callbacks"):
        r = engine.reflect(MSGS, RESULTS, TurnBudget())
    assert r.reflection.startswith("All good")
    assert manager.last_reflection is r
    assert "on_reflection" in caplog.text


@pytest.mark.parametrize("exc", [ProviderError("down", kind="server"), RuntimeError("x"), TimeoutError()])
def test_provider_exception_gives_failed_stub_and_never_raises(exc):
    seen = []
    engine, manager, provider = make(provider=RecordingProvider(exc=exc), callbacks=AgentCallbacks(on_reflection=seen.append))
    manager.on_tool_error("boom")
    r = engine.reflect(MSGS, RESULTS, TurnBudget())
    assert r.reflection == "[reflection failed]"
    assert r.should_continue is True
    assert seen == []  # not shown as a real reflection
    assert manager.last_reflection is None
    assert len(provider.calls) == 1


def test_failed_reflection_uses_a_slot():
    budget = TurnBudget(max_reflections=1)
    engine, _, _ = make(provider=RecordingProvider(exc=RuntimeError("x")))
    assert engine.reflect(MSGS, [], budget).reflection == "[reflection failed]"
    assert engine.reflect(MSGS, [], budget).reflection == "[budget exhausted]"


def test_messages_and_tool_results_not_mutated():
    engine, manager, _ = make()
    manager.on_tool_error("e")
    msgs = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "1", "name": "t", "arguments": {"a": 1}}]},
        {"role": "tool", "tool_call_id": "1", "name": "t", "content": "out", "is_error": False},
    ]
    results = [{"name": "t", "status": "ok", "output": "out"}]
    before = copy.deepcopy((msgs, results))
    engine.reflect(msgs, results, TurnBudget())
    assert (msgs, results) == before


def test_engine_is_reusable_across_turns():
    engine, manager, provider = make()
    for _ in range(3):
        manager.on_turn_start()
        assert engine.reflect(MSGS, [], TurnBudget(max_reflections=1)).reflection.startswith("All good")
    assert len(provider.calls) == 3
