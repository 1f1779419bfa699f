"""A turn's events become OpenTelemetry spans: turn → llm / tool / reflect / compact,
GenAI attributes with the calls' token numbers, prompt provenance and run context on the
turn, ERROR status on a failed turn, and no secret on any span."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.retry import RetryPolicy
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.agent.tracing.spans import COMPACT_SPAN, LLM_SPAN, REFLECT_SPAN, TOOL_SPAN, TURN_SPAN
from jupyter_brain.providers.base import ProviderResult, ServerToolUse, ToolCall
from jupyter_brain.providers.scripted import ScriptedProvider

FILLER = " ".join(f"row{i} revenue {i * 37 % 1000} units" for i in range(60))  # ~300+ tokens


@tool
def fetch(part: int) -> str:
    """Fetch one part of the sales report."""
    return f"part {part}: revenue 42"


@tool
def fetch_big(part: int) -> str:
    """Fetch one large part of the sales report."""
    return f"part {part}: {FILLER}"


def _call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


def _by_name(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return sorted((s for s in spans if s.name == name), key=lambda s: s.start_time or 0)


def _only(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    found = _by_name(spans, name)
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


def _assert_children_of(turn: ReadableSpan, spans: list[ReadableSpan]) -> None:
    assert turn.context is not None
    for span in spans:
        assert span.parent is not None and span.parent.span_id == turn.context.span_id, span.name
        assert span.context is not None and span.context.trace_id == turn.context.trace_id
        assert turn.start_time is not None and turn.end_time is not None
        assert span.start_time is not None and span.end_time is not None
        assert turn.start_time <= span.start_time <= span.end_time <= turn.end_time, span.name


class TimedProvider(ScriptedProvider):
    """Records when each model call began, to place it inside its llm span."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.began: list[int] = []

    def generate(self, messages: Any, tools: Any, **kw: Any) -> Any:
        if not any(m.get("kind") in ("reflection", "summary_request") for m in messages):  # the loop's calls
            self.began.append(time.time_ns())
        return super().generate(messages, tools, **kw)

    def generate_stream(self, messages: Any, tools: Any, **kw: Any) -> Any:
        self.began.append(time.time_ns())
        return super().generate_stream(messages, tools, **kw)


@pytest.mark.parametrize("stream", [False, True])
def test_a_turn_with_a_tool_call_and_reflection_is_a_tree_of_spans(exporter, stream) -> None:
    provider = TimedProvider([
        {"text": "Let me look.", "tool_calls": [_call("fetch", "call_a", part=1)],
         "usage": {"input_tokens": 120, "output_tokens": 30, "cache_read_tokens": 5}},
        {"text": "Revenue is 42.", "usage": {"input_tokens": 200, "output_tokens": 40}},
    ], model="scripted-model")
    built: list[int] = []

    def workspace() -> str:  # rendered into each request, before its model call
        built.append(time.time_ns())
        return "## Variables\n- df: DataFrame"

    harness = AgentHarness(provider, AgentToolRegistry([fetch]), None, think_level="medium", reflect_every=1,
                           stream=stream, workspace=workspace, agent_id="analyst-bot")
    result = harness.run_turn("sess-1", [], "What is the revenue?")
    assert result.status == "completed", result.error

    spans = exporter.get_finished_spans()
    turn = _only(spans, TURN_SPAN)
    llms, tools, reflects = _by_name(spans, LLM_SPAN), _by_name(spans, TOOL_SPAN), _by_name(spans, REFLECT_SPAN)
    assert len(llms) == 2 and len(tools) == 1 and len(reflects) == 2
    assert {s.name for s in spans} == {TURN_SPAN, LLM_SPAN, TOOL_SPAN, REFLECT_SPAN}
    _assert_children_of(turn, [*llms, *tools, *reflects])
    assert turn.parent is None

    first, second = (dict(s.attributes or {}) for s in llms)
    for attributes in (first, second):
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.provider.name"] == attributes["gen_ai.system"] == "scripted"
        assert attributes["gen_ai.request.model"] == "scripted-model"
        assert attributes["gen_ai.conversation.id"] == "sess-1"
    assert (first["gen_ai.usage.input_tokens"], first["gen_ai.usage.output_tokens"]) == (125, 30)
    assert first["gen_ai.usage.cache_read.input_tokens"] == 5
    assert (second["gen_ai.usage.input_tokens"], second["gen_ai.usage.output_tokens"]) == (200, 40)
    assert first["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert second["gen_ai.response.finish_reasons"] == ("end_turn",)
    assert [a["jupyter_brain.step"] for a in (first, second)] == [1, 2]

    # Each llm span holds its model call, and starts after its request was built.
    assert len(provider.began) == 2 and len(built) == 2
    for span, request_built, call_began in zip(llms, built, provider.began, strict=True):
        assert span.start_time is not None and span.end_time is not None
        assert request_built <= span.start_time <= call_began <= span.end_time
    # The tool ran between the two calls; each reflection came after its step's work.
    tool_span = tools[0]
    assert llms[0].end_time <= tool_span.start_time and tool_span.end_time <= llms[1].start_time  # type: ignore[operator]
    assert reflects[0].start_time >= tool_span.end_time  # type: ignore[operator]

    tool_attributes = dict(tool_span.attributes or {})
    assert tool_attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool_attributes["gen_ai.tool.name"] == "fetch"
    assert tool_attributes["gen_ai.tool.call.id"] == "call_a"
    assert tool_attributes["jupyter_brain.tool.status"] == "ok"
    assert tool_span.status.status_code is StatusCode.UNSET
    assert [dict(r.attributes or {})["jupyter_brain.reflection.trigger"] for r in reflects] == ["periodic"] * 2

    turn_attributes = dict(turn.attributes or {})
    assert turn_attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn_attributes["gen_ai.agent.name"] == "analyst-bot"
    assert turn_attributes["jupyter_brain.turn_id"] == result.turn_id
    assert turn_attributes["jupyter_brain.think_level"] == "medium"
    assert turn_attributes["jupyter_brain.reflect_every"] == 1
    assert turn_attributes["jupyter_brain.turn.status"] == "completed"
    assert turn_attributes["jupyter_brain.turn.tool_calls"] == 1
    assert turn_attributes["jupyter_brain.turn.reflections"] == 2
    # The turn's totals count the reflections' calls too.
    assert turn_attributes["gen_ai.usage.input_tokens"] == result.usage.total_input_tokens > 325
    assert turn_attributes["gen_ai.usage.output_tokens"] == result.output_tokens


def test_a_forced_compaction_is_a_span_before_its_model_call(exporter) -> None:
    script: list[Any] = [{"text": f"step {s}", "tool_calls": [_call("fetch_big", f"c{s}", part=s)]} for s in range(8)]
    harness = AgentHarness(ScriptedProvider([*script, "done"]), AgentToolRegistry([fetch_big]), None,
                           max_steps=20, context_budget=2_000, compaction="token_budget")
    result = harness.run_turn("s", [], "sum the report")
    assert result.status == "completed", result.error
    assert harness.compactions >= 1

    spans = exporter.get_finished_spans()
    turn = _only(spans, TURN_SPAN)
    compacts = _by_name(spans, COMPACT_SPAN)
    assert len(compacts) == harness.compactions
    _assert_children_of(turn, compacts)
    attributes = dict(compacts[0].attributes or {})
    assert attributes["jupyter_brain.compaction.strategy"] == "token_budget"
    assert attributes["jupyter_brain.compaction.tokens_after"] < attributes["jupyter_brain.compaction.tokens_before"]
    step = attributes["jupyter_brain.step"]
    llm = next(s for s in _by_name(spans, LLM_SPAN) if dict(s.attributes or {})["jupyter_brain.step"] == step)
    assert compacts[0].end_time <= llm.start_time  # type: ignore[operator]


def test_prompt_provenance_and_run_context_are_turn_attributes(exporter) -> None:
    harness = AgentHarness(
        ScriptedProvider(["fine"]), None, None, prompt_id="analyst", prompt_version="3",
        prompt_tags=frozenset({"sales", "beta"}), prompt_engine="jinja2", prompt_variables=("dataset", "currency"),
        run_context_metadata={"notebook": "sales.ipynb", "run": 7, "ratio": 0.5, "debug": True,
                              "owner": {"team": "finance"}, "labels": ["q1", "eu"]},
    )
    result = harness.run_turn("s", [], "hello")
    attributes = dict(_only(exporter.get_finished_spans(), TURN_SPAN).attributes or {})
    assert attributes["jupyter_brain.prompt.id"] == "analyst"
    assert attributes["jupyter_brain.prompt.version"] == "3"
    assert attributes["jupyter_brain.prompt.tags"] == ("beta", "sales")
    assert attributes["jupyter_brain.prompt.engine"] == "jinja2"
    assert attributes["jupyter_brain.prompt.variables"] == ("dataset", "currency")
    assert attributes["jupyter_brain.prompt.render_hash"] == result.prompt_render_hash
    assert result.prompt_render_hash.startswith("sha256:")
    assert attributes["jupyter_brain.run_context.notebook"] == "sales.ipynb"
    assert attributes["jupyter_brain.run_context.run"] == 7
    assert attributes["jupyter_brain.run_context.ratio"] == 0.5
    assert attributes["jupyter_brain.run_context.debug"] is True
    assert attributes["jupyter_brain.run_context.owner.team"] == "finance"
    assert attributes["jupyter_brain.run_context.labels"] == ("q1", "eu")


def test_a_failed_turn_has_error_status_on_its_turn_and_llm_spans(exporter) -> None:
    provider = ScriptedProvider([{"error": {"message": "model not found", "kind": "not_found", "status_code": 404}}])
    result = AgentHarness(provider, None, None).run_turn("s", [], "hello")
    assert result.status == "error"
    spans = exporter.get_finished_spans()
    turn, llm = _only(spans, TURN_SPAN), _only(spans, LLM_SPAN)
    assert turn.status.status_code is StatusCode.ERROR
    assert "model not found" in (turn.status.description or "")
    assert llm.status.status_code is StatusCode.ERROR
    assert dict(llm.attributes or {})["error.type"] == "not_found"
    assert "gen_ai.usage.input_tokens" not in dict(llm.attributes or {})


def test_a_retried_call_is_one_failed_and_one_good_llm_span(exporter) -> None:
    provider = ScriptedProvider([{"error": {"message": "overloaded", "kind": "overloaded"}}, "answer"])
    harness = AgentHarness(provider, None, None)
    harness.retry = RetryPolicy(wait=lambda seconds, cancel: False)
    assert harness.run_turn("s", [], "hello").status == "completed"
    failed, good = _by_name(exporter.get_finished_spans(), LLM_SPAN)
    assert failed.status.status_code is StatusCode.ERROR and dict(failed.attributes or {})["error.type"] == "overloaded"
    assert [dict(s.attributes or {})["jupyter_brain.llm.attempt"] for s in (failed, good)] == [1, 2]
    assert good.status.status_code is StatusCode.UNSET
    assert failed.end_time <= good.start_time  # type: ignore[operator]


def test_failed_and_unknown_tools_are_error_spans(exporter) -> None:
    @tool
    def broken() -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    script = [{"text": "", "tool_calls": [_call("broken", "b1"), _call("nope", "n1")]}, "done"]
    AgentHarness(ScriptedProvider(script), AgentToolRegistry([broken]), None).run_turn("s", [], "q")
    tools = {dict(s.attributes or {})["gen_ai.tool.call.id"]: s for s in _by_name(exporter.get_finished_spans(), TOOL_SPAN)}
    assert tools["b1"].status.status_code is StatusCode.ERROR
    assert dict(tools["b1"].attributes or {})["jupyter_brain.tool.status"] == "error"
    assert dict(tools["n1"].attributes or {})["error.type"] == "invalid"  # an unknown tool
    assert "unknown tool" in (tools["n1"].status.description or "")



def test_a_server_tool_is_a_tool_span_marked_as_the_servers(exporter) -> None:
    """A tool the provider ran on its own servers (Anthropic's tool search) is a tool span
    like ours, typed ``extension`` and marked ``by_server``; ours stay ``function``."""
    search = ServerToolUse(id="srvtoolu_1", name="tool_search_tool_regex", input={"query": "weather"},
                           summary="2 tools found")
    script = [ProviderResult(text="", tool_calls=[ToolCall(id="f1", name="fetch", arguments={"part": 1})],
                             server_tools=[search], stop_reason="tool_use"), "done"]
    AgentHarness(ScriptedProvider(script), AgentToolRegistry([fetch]), None).run_turn("s", [], "q")
    tools = {dict(s.attributes or {})["gen_ai.tool.call.id"]: dict(s.attributes or {})
             for s in _by_name(exporter.get_finished_spans(), TOOL_SPAN)}
    assert tools["srvtoolu_1"]["gen_ai.tool.type"] == "extension"
    assert tools["srvtoolu_1"]["jupyter_brain.tool.by_server"] is True
    assert tools["srvtoolu_1"]["gen_ai.tool.name"] == "tool_search_tool_regex"
    assert tools["f1"]["gen_ai.tool.type"] == "function"
    assert tools["f1"]["jupyter_brain.tool.by_server"] is False

ANTHROPIC_KEY = "sk-ant-api03-" + "Zx9" * 20
CUSTOM_SECRET = "hunter2-custom-secret-value"


def test_no_secret_reaches_a_span(exporter, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)

    @tool
    def leaky() -> str:
        """Fails with the key in its message."""
        raise RuntimeError(f"auth failed for {ANTHROPIC_KEY} and {CUSTOM_SECRET}")

    provider = ScriptedProvider([
        {"text": "", "tool_calls": [_call("leaky", "l1")]},
        {"error": {"message": f"bad key {ANTHROPIC_KEY}", "kind": "auth", "status_code": 401}},
    ])
    harness = AgentHarness(
        provider, AgentToolRegistry([leaky]), None, secrets=(CUSTOM_SECRET,), prompt_id=f"p-{CUSTOM_SECRET}",
        run_context_metadata={"api_key": "plain-value-no-known-format", "note": f"uses {ANTHROPIC_KEY}",
                              "nested": {"auth_token": "another-plain-value"}},
    )
    assert harness.run_turn("s", [], "go").status == "error"
    spans = exporter.get_finished_spans()
    assert {s.name for s in spans} == {TURN_SPAN, LLM_SPAN, TOOL_SPAN}
    dumped = "\n".join(span.to_json() for span in spans)
    for secret in (ANTHROPIC_KEY, CUSTOM_SECRET, "plain-value-no-known-format", "another-plain-value"):
        assert secret not in dumped
    assert "[REDACTED]" in dumped
    turn = dict(_only(spans, TURN_SPAN).attributes or {})
    assert turn["jupyter_brain.run_context.api_key"] == "[REDACTED]"
    assert turn["jupyter_brain.run_context.nested.auth_token"] == "[REDACTED]"
    assert json.loads(_only(spans, TURN_SPAN).to_json())["status"]["status_code"] == "ERROR"


def test_after_a_fallback_llm_spans_name_the_chain_member_that_answered(exporter) -> None:
    from jupyter_brain.providers.chain import ChainProvider

    overloaded = {"error": {"message": "Overloaded", "kind": "overloaded", "status_code": 529}}
    backup = ScriptedProvider([{"text": "Looking.", "tool_calls": [_call("fetch", "c1", part=1)]}, "Revenue 42."],
                              model="qwen3:4b")
    backup.name = "ollama"  # type: ignore[misc]
    harness = AgentHarness(ChainProvider([ScriptedProvider([overloaded], model="primary"), backup]),
                           AgentToolRegistry([fetch]), None)
    harness.retry = RetryPolicy(wait=lambda seconds, cancel: False)
    assert harness.run_turn("s", [], "revenue?").status == "completed"
    first, second = (dict(s.attributes or {}) for s in _by_name(exporter.get_finished_spans(), LLM_SPAN))
    assert first["gen_ai.request.model"] == "primary"  # asked first
    assert (first["gen_ai.response.model"], first["llm.model_name"], first["llm.provider"]) == (
        "qwen3:4b", "qwen3:4b", "ollama")  # answered
    assert (second["gen_ai.request.model"], second["gen_ai.provider.name"], second["llm.model_name"]) == (
        "qwen3:4b", "ollama", "qwen3:4b")  # the turn's next call goes to the member that answered
