"""A provider chain inside a turn: the ProviderFallback event, who answered, the price of
the step, and a history either provider can continue.

The mid-turn switch runs the real SDKs against loopback servers: claude-sonnet-4's recorded
signed-thinking tool call (charmbracelet/fantasy, see
``tests/providers/recorded/anthropic/fantasy-thinking-tool-use.json``), then a 529 from the
same server, answered by an OpenAI-compatible mock server.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from mock_servers import HttpError, MockOpenAI, Reply

from jupyter_brain.agent.cost import SessionCostTracker, price_for
from jupyter_brain.agent.events import EventLog, ProviderFallback, RetryEvent
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.history import history_problems
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.anthropic import AnthropicProvider
from jupyter_brain.providers.base import ProviderError, StreamEvent, Usage
from jupyter_brain.providers.chain import ChainProvider
from jupyter_brain.providers.openai_compat import OpenAICompatProvider
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.widgets.text_view import TextView, events_to_markdown
from tests.providers.replay import Body, ReplayServer, recording

OVERLOADED = {"error": {"kind": "overloaded", "message": "Overloaded", "status_code": 529}}


@tool
def weather(location: str) -> str:
    """The weather at a place."""
    return f"sunny in {location}, 24°C"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def run(provider: Any, question: str = "Weather in Florence?", *, history: list | None = None,
        log: EventLog | None = None, **kw: Any) -> tuple[Any, list[Any], EventLog]:
    log = log or EventLog(":memory:")
    harness = AgentHarness(provider, AgentToolRegistry([weather]), log, **kw)
    harness.retry.wait = lambda seconds, cancel: False  # no real waiting between attempts
    events: list[Any] = []
    result = harness.run_turn("s1", history or [], question, on_event=events.append)
    return result, events, log


@pytest.mark.parametrize("stream", [True, False])
def test_a_fallback_is_an_event_the_log_keeps_and_the_views_show(stream: bool) -> None:
    backup = ScriptedProvider([{"text": "Looking.", "tool_calls": [{"name": "weather", "arguments": {"location": "Florence"}}]},
                               "Sunny, 24°C."], model="backup")
    provider = ChainProvider([ScriptedProvider([OVERLOADED], model="primary"), backup])
    result, events, log = run(provider, stream=stream)
    assert result.status == "completed" and result.text == "Sunny, 24°C."
    fallbacks = [e for e in events if isinstance(e, ProviderFallback)]
    assert [(e.step, e.failed, e.next, e.kind) for e in fallbacks] == [(1, "scripted:primary", "scripted:backup", "overloaded")]
    assert result.providers_used == ["scripted:backup", "scripted:backup"]  # it stayed with the backup
    assert history_problems(result.messages, require_final_assistant=True) == []
    logged = [e for e in log.events(turn_id=result.turn_id) if e.type == "provider_fallback"]
    assert len(logged) == 1 and logged[0].message == "Overloaded"
    out = io.StringIO()
    TextView(out).replay(log.events(turn_id=result.turn_id))
    assert "scripted:primary failed (overloaded) — continued with scripted:backup" in out.getvalue()
    assert "failed (overloaded) — continued with scripted:backup" in events_to_markdown(events)


def test_a_plain_provider_names_itself_in_providers_used() -> None:
    result, events, _ = run(ScriptedProvider(["hello"], model="solo"))
    assert result.providers_used == ["scripted:solo"] and not any(isinstance(e, ProviderFallback) for e in events)


def priced(name: str, model: str, responses: list) -> ScriptedProvider:
    provider = ScriptedProvider(responses, model=model)
    provider.name = name  # type: ignore[misc]
    return provider


@pytest.mark.parametrize("tracker", [None, SessionCostTracker()])
def test_a_step_costs_what_the_answering_provider_charges(tracker: SessionCostTracker | None) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 100}
    paid = priced("anthropic", "claude-sonnet-4-6", [{"text": "paid answer", "usage": usage}])
    free_failing = ScriptedProvider([OVERLOADED], model="local")
    result, _, _ = run(ChainProvider([free_failing, paid]), cost_tracker=tracker)
    expected = price_for("claude-sonnet-4-6", "anthropic").cost(Usage(**usage))  # type: ignore[union-attr]
    assert expected > 0 and result.cost_usd == pytest.approx(expected)
    paid_failing = priced("anthropic", "claude-sonnet-4-6", [OVERLOADED])
    free = ScriptedProvider([{"text": "free answer", "usage": usage}], model="local")
    result, _, _ = run(ChainProvider([paid_failing, free]), cost_tracker=tracker)
    assert result.cost_usd == 0.0


class FailsOnceMidStream:
    """First call: some text, then an overload event; afterwards a clean answer."""

    name, model, supports_native_thinking = "flaky", "m", False

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, messages: list, tools: list, **kw: Any) -> Any:
        raise NotImplementedError

    def generate_stream(self, messages: list, tools: list, **kw: Any) -> Iterator[StreamEvent]:
        self.calls += 1
        if self.calls == 1:
            yield StreamEvent(type="text", text="Half an ans")
            raise ProviderError("Overloaded", kind="overloaded")
        result = ScriptedProvider(["A whole answer."]).generate(messages, tools)
        yield StreamEvent(type="text", text=result.text)
        yield StreamEvent(type="done", result=result)


def test_a_failure_after_output_is_retried_on_the_same_provider_not_switched() -> None:
    flaky, backup = FailsOnceMidStream(), ScriptedProvider(["never"], model="backup")
    result, events, _ = run(ChainProvider([flaky, backup]), stream=True)
    assert result.text == "A whole answer." and flaky.calls == 2 and not backup.calls
    assert any(isinstance(e, RetryEvent) for e in events)
    assert not any(isinstance(e, ProviderFallback) for e in events)
    assert result.providers_used == ["flaky:m"]


def test_when_every_provider_fails_the_turn_ends_with_an_error_and_a_valid_history() -> None:
    provider = ChainProvider([ScriptedProvider([OVERLOADED], model="a"),
                              ScriptedProvider([{"error": {"kind": "auth", "message": "bad key", "status_code": 401}}],
                                               model="b")])
    result, events, _ = run(provider, stream=True)
    assert result.status == "error" and "scripted:a: overloaded" in (result.error or "")
    assert [e.next for e in events if isinstance(e, ProviderFallback)] == ["scripted:b"]
    assert history_problems(result.messages, require_final_assistant=True) == []


def test_a_switch_mid_turn_leaves_a_history_both_providers_take() -> None:
    """Anthropic thinks (signed) and calls a tool; its next request meets a 529, the
    OpenAI-compatible server finishes the turn. The next turn goes to either of them."""
    with ReplayServer(anthropic=True) as anthropic, MockOpenAI(models=["qwen3:4b"]) as openai:
        anthropic.push(Body(recording("anthropic/fantasy-thinking-tool-use").body()), HttpError(529, "Overloaded"))
        openai.push(Reply(text="Sunny, 24°C in Florence."))

        def members() -> list[Any]:
            return [AnthropicProvider("claude-sonnet-4", api_key="sk-ant-x", base_url=anthropic.url, max_retries=0),
                    OpenAICompatProvider("qwen3:4b", api_key="k", base_url=openai.url + "/v1", max_retries=0)]

        log = EventLog(":memory:")
        result, events, _ = run(ChainProvider(members()), log=log, stream=True, think_level="medium")
        assert result.status == "completed" and result.text == "Sunny, 24°C in Florence."
        assert result.providers_used == ["anthropic:claude-sonnet-4", "openai:qwen3:4b"]
        assert [(e.step, e.kind) for e in events if isinstance(e, ProviderFallback)] == [(2, "overloaded")]
        history = result.messages
        assert history_problems(history, require_final_assistant=True) == []
        signature = history[1]["thinking"][0]["signature"]
        sent = openai.bodies("/chat/completions")[0]
        assert signature not in json.dumps(sent)

        # The next turn, on Anthropic again: its signed thinking goes back unchanged.
        anthropic.push(Body(recording("anthropic/sdk-text-no-final-blank-line").body()))
        again, _, _ = run(ChainProvider(members()), "And tomorrow?", history=history, log=log, stream=True,
                          think_level="medium")
        body = anthropic.bodies("/v1/messages")[-1]
        # ... or on the OpenAI-compatible server: no signature, the tool call paired with its result.
        openai.push(Reply(text="Rain tomorrow."))
        other, _, _ = run(ChainProvider(members()[1:]), "And tomorrow?", history=history, log=log, stream=True)
        wire = openai.bodies("/chat/completions")[-1]["messages"]
    assert again.status == "completed" and again.providers_used == ["anthropic:claude-sonnet-4"]
    assert body["messages"][1]["content"][0]["signature"] == signature
    uses = [b["id"] for m in body["messages"] for b in m["content"] if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for m in body["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert uses == results and len(uses) == 1
    assert other.text == "Rain tomorrow." and signature not in json.dumps(wire)
    assert [m["role"] for m in wire] == ["system", "user", "assistant", "tool", "assistant", "user"]


def test_after_a_fallback_the_views_name_the_member_that_answered() -> None:
    from jupyter_brain.widgets._header import Header

    backup = ScriptedProvider(["Sunny."], model="qwen3:4b")
    backup.name = "ollama"  # type: ignore[misc]
    result, events, _ = run(ChainProvider([ScriptedProvider([OVERLOADED], model="primary"), backup]))
    header = Header()
    for e in events:
        header.update(e.model_dump())
        if e.type == "turn_start":
            assert header.model_label == "scripted/primary"  # who is asked first
    assert header.model_label == "ollama/qwen3:4b"  # a model name's own colon survives
