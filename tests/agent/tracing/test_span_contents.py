"""What a trace viewer (Phoenix) shows of a span: a tool's arguments and result (redacted,
capped), the session id on every span, and a thinking phase as a span of its own."""

from __future__ import annotations

import json

from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.agent.tracing.spans import LLM_SPAN, MAX_TOOL_TEXT, THINKING_SPAN, TOOL_SPAN, TURN_SPAN
from jupyter_brain.providers.scripted import ScriptedProvider

BULK = " ".join(f"row_{i}={i * 31 % 997};" for i in range(150))


@tool
def lookup(region: str, password: str = "") -> str:
    """Look a region's revenue up."""
    return f"{region}: revenue 42 ({len(password)} chars of password)"


@tool
def dump(part: int) -> str:
    """A large result."""
    return f"part {part}: {BULK}"


def _attributes(span) -> dict:
    return dict(span.attributes or {})


def test_a_tool_span_carries_its_arguments_and_result_redacted(exporter) -> None:
    secret = "hunter2-custom-secret-value"
    script = [{"text": "", "tool_calls": [{"id": "c1", "name": "lookup",
                                           "arguments": {"region": "North", "password": secret}}]}, "North: 42."]
    harness = AgentHarness(ScriptedProvider(script), AgentToolRegistry([lookup]), None, secrets=(secret,))
    assert harness.run_turn("sess-9", [], "revenue?").status == "completed"
    spans = exporter.get_finished_spans()
    tool_span = next(s for s in spans if s.name == TOOL_SPAN)
    attributes = _attributes(tool_span)
    arguments = json.loads(attributes["gen_ai.tool.call.arguments"])
    assert arguments == {"region": "North", "password": "[REDACTED]"}
    assert attributes["input.value"] == attributes["gen_ai.tool.call.arguments"]
    assert attributes["input.mime_type"] == "application/json"
    assert attributes["gen_ai.tool.call.result"] == attributes["output.value"] == "North: revenue 42 (27 chars of password)"
    assert all(s.name != TOOL_SPAN or secret not in s.to_json() for s in spans)
    assert {s.name for s in spans} == {TURN_SPAN, LLM_SPAN, TOOL_SPAN}
    assert {s.name: _attributes(s)["session.id"] for s in spans} == dict.fromkeys((TURN_SPAN, LLM_SPAN, TOOL_SPAN),
                                                                                 "sess-9")


def test_a_long_tool_result_is_capped_on_its_span(exporter) -> None:
    script = [{"text": "", "tool_calls": [{"id": "c1", "name": "dump", "arguments": {"part": 1}}]}, "done"]
    AgentHarness(ScriptedProvider(script), AgentToolRegistry([dump]), None).run_turn("s", [], "dump it")
    [tool_span] = [s for s in exporter.get_finished_spans() if s.name == TOOL_SPAN]
    result = _attributes(tool_span)["output.value"]
    assert result.startswith("part 1: row_0=0;")
    assert len(result) <= MAX_TOOL_TEXT + 40


def test_a_thinking_phase_is_a_span_of_its_turn(exporter) -> None:
    steps = [{"text": f"Fetching {i}.", "tool_calls": [{"name": "dump", "arguments": {"part": i}}]} for i in range(2)]
    thinker = ScriptedProvider(summaries=["Summary: parts fetched.\nState: reading.\nNext: next part."] * 4)
    harness = AgentHarness(ScriptedProvider([*steps, "done"]), AgentToolRegistry([dump]), None, max_steps=5,
                           thinking_phase=True, thinking_strategy="summary", thinking_provider=thinker)
    result = harness.run_turn("s", [], "Go through the parts.")
    assert result.status == "completed" and result.thinking_phases == 2
    spans = exporter.get_finished_spans()
    turn = next(s for s in spans if s.name == TURN_SPAN)
    thinking = sorted((s for s in spans if s.name == THINKING_SPAN), key=lambda s: s.start_time or 0)
    assert len(thinking) == 2
    tools = sorted((s for s in spans if s.name == TOOL_SPAN), key=lambda s: s.start_time or 0)
    for span, tool_span in zip(thinking, tools, strict=True):
        assert span.parent is not None and turn.context is not None and span.parent.span_id == turn.context.span_id
        assert tool_span.end_time <= span.start_time <= span.end_time <= turn.end_time  # type: ignore[operator]
        attributes = _attributes(span)
        assert attributes["openinference.span.kind"] == "CHAIN"
        assert attributes["jupyter_brain.thinking.strategy"] == "summary"
        assert attributes["jupyter_brain.thinking.model_calls"] == 1
        assert attributes["jupyter_brain.thinking.tokens_before"] > 0 and attributes["jupyter_brain.thinking.tokens_after"] > 0
        assert "parts fetched" in attributes["output.value"]
        assert attributes["session.id"] == "s"
