"""#39: a replayed call costs nothing now, and the provider still knows what it cost when it
was recorded (its recorded usage at the recorded model's price), for the views to show."""

from __future__ import annotations

import pytest

from jupyter_brain.providers.replay import RecordedCall, ReplayingProvider, TurnRecording
from jupyter_brain.providers.replay.fingerprint import fingerprint

MESSAGES = [{"role": "user", "content": "Which month?"}]


def _recording(provider: str, model: str) -> TurnRecording:
    fp = fingerprint(MESSAGES, []).value
    usage = {"input_tokens": 1000, "output_tokens": 100}
    return TurnRecording(provider=provider, model=model,
                         calls=[RecordedCall(fp=fp, response={"text": "July", "usage": usage})])


def test_a_replayed_call_is_free_now_and_keeps_what_it_cost_when_recorded() -> None:
    provider = ReplayingProvider(None, [_recording("anthropic", "claude-haiku-4-5")])
    assert provider.recorded_cost() is None  # nothing replayed yet
    result = provider.generate(MESSAGES, [])
    assert result.text == "July" and result.usage.input_tokens == 0 and result.usage.output_tokens == 0
    recorded = provider.recorded_cost()
    assert recorded is not None
    assert (recorded["input_tokens"], recorded["output_tokens"], recorded["calls"]) == (1000, 100, 1)
    assert recorded["cost_usd"] == pytest.approx((1000 * 1.0 + 100 * 5.0) / 1_000_000)  # claude-haiku-4's price


def test_a_model_without_a_price_is_said_so() -> None:
    provider = ReplayingProvider(None, [_recording("someone", "unknown-model")])
    provider.generate(MESSAGES, [])
    recorded = provider.recorded_cost()
    assert recorded is not None and recorded["cost_usd"] is None and recorded["input_tokens"] == 1000


def test_a_replayed_tool_call_keeps_its_arguments_in_the_models_order() -> None:
    """Found by CI's live pass (#39): a saved notebook's JSON sorts every object's keys, so a
    replayed call showed {'path', 'query'} where the model wrote {'query', 'path'}."""
    import json

    from jupyter_brain.providers.base import ProviderResult, ToolCall

    written = ProviderResult(text="", tool_calls=[ToolCall(id="c", name="search", arguments={"query": "J", "path": "d"})])
    call = RecordedCall.of("step", fingerprint(MESSAGES, []), written)
    saved = RecordedCall.model_validate(json.loads(json.dumps(call.model_dump(), sort_keys=True)))  # as nbformat saves
    assert list(saved.result().tool_calls[0].arguments) == ["query", "path"]
