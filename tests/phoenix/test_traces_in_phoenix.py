"""A turn's trace in a real Arize Phoenix: exported over OTLP/HTTP the way the README sets
tracing up, read back through Phoenix's REST API, and looked at in its UI.

One scripted turn (a model name and token usage, a tool call with arguments, a reflection
after every step, a thinking phase) runs with an API key in the environment, a configured
secret in the tool's arguments and the key in its result. Phoenix must hold one trace: the
agent span with the llm / tool / reflect / thinking spans under it, the scripted token
counts, the model, the tool's arguments and result, the session id; and neither the key
nor the secret anywhere in what its API returns.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from jupyter_brain.agent.harness import AgentHarness, TurnResult
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.agent.tracing import use_tracer_provider
from jupyter_brain.agent.tracing.spans import LLM_SPAN, REFLECT_SPAN, THINKING_SPAN, TOOL_SPAN, TURN_SPAN
from jupyter_brain.providers.scripted import ScriptedProvider

from .server import PhoenixServer

PROJECT = "jupyter-brain-traces"
MODEL = "claude-sonnet-4-5"
SESSION = "sales-review-7"
API_KEY = "sk-ant-api03-" + "Qw7" * 20  # in the environment, as a user's key would be
SECRET = "warehouse-pass-8d1f2c9e"  # a configured secret (secrets=...): redaction hides it
ARGUMENTS = {"region": "North", "quarter": "Q1", "password": SECRET}
RESULT = "North Q1: revenue 42,000 EUR across 3 stores"
USAGE = [{"input_tokens": 1200, "output_tokens": 85}, {"input_tokens": 1490, "output_tokens": 40}]
READ_BACK_S = 120.0  # a bound on Phoenix's ingestion after the flush, not a schedule
CHROMIUM = "/usr/bin/chromium"  # Debian's; never a downloaded browser build
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WAIT_MS = 300_000  # a bound against hanging: each wait returns when its condition holds
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


@tool
def query_sales(region: str, quarter: str, password: str) -> str:
    """Sum a region's sales for one quarter from the warehouse."""
    return f"{region} {quarter}: revenue 42,000 EUR across 3 stores (connected with key {API_KEY})"


@dataclass
class TracedTurn:
    result: TurnResult
    sent: list[ReadableSpan]  # what the exporter sent (an in-memory copy)
    spans: list[dict[str, Any]]  # what Phoenix's API returns for the project
    raw: str  # the API's responses as received


def _run_turn(endpoint: str) -> tuple[TurnResult, list[ReadableSpan]]:
    """The scripted turn, traced with the README's setup (an OTLP/HTTP exporter behind a
    batch processor, flushed before reading) plus an in-memory copy of what was sent."""
    provider = TracerProvider(resource=Resource.create({
        "service.name": "jupyter-brain-notebook", "openinference.project.name": PROJECT}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint, timeout=30)))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    script = [
        {"text": "Let me query the warehouse.", "usage": USAGE[0],
         "tool_calls": [{"id": "call_sales_1", "name": "query_sales", "arguments": ARGUMENTS}]},
        {"text": "North sold 42,000 EUR in Q1.", "usage": USAGE[1]},
    ]
    thinker = ScriptedProvider(summaries=["Summary: North Q1 revenue fetched.\nState: answering.\nNext: report it."],
                               model="claude-haiku-4-5")
    harness = AgentHarness(
        ScriptedProvider(script, model=MODEL), AgentToolRegistry([query_sales]), None, reflect_every=1,
        think_level="medium", thinking_phase=True, thinking_strategy="summary", thinking_provider=thinker,
        secrets=(SECRET,), agent_id="sales-analyst", run_context_metadata={"notebook": "sales.ipynb", "api_key": SECRET},
    )
    use_tracer_provider(provider)
    try:
        result = harness.run_turn(SESSION, [], "What did North sell in Q1?")
        assert provider.force_flush(timeout_millis=60_000), "the spans were not exported"
    finally:
        use_tracer_provider(None)
        provider.shutdown()
    return result, list(memory.get_finished_spans())


def _read_back(phoenix: PhoenixServer, expected: int) -> tuple[list[dict[str, Any]], str]:
    """The project's spans from Phoenix's REST API, polled (bounded) until all have arrived."""
    deadline = time.monotonic() + READ_BACK_S
    raw: list[str] = []
    spans: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        response = phoenix.get(f"/v1/projects/{PROJECT}/spans", limit=1000)
        if response.status_code != 404:  # 404: the project is made with its first span
            response.raise_for_status()
            raw.append(response.text)
            spans = response.json()["data"]
            if len(spans) >= expected:
                return spans, "\n".join(raw)
        time.sleep(0.5)  # the poll's interval; the bound is the deadline
    raise AssertionError(f"Phoenix holds {len(spans)} of {expected} spans after {READ_BACK_S:.0f} s:\n"
                         f"{phoenix.log_tail()}")


@pytest.fixture(scope="module")
def traced(phoenix: PhoenixServer) -> Iterator[TracedTurn]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("ANTHROPIC_API_KEY", API_KEY)
        result, sent = _run_turn(phoenix.traces_endpoint)
    assert result.status == "completed", result.error
    spans, raw = _read_back(phoenix, len(sent))
    yield TracedTurn(result, sent, spans, raw)


def _named(spans: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return sorted((s for s in spans if s["name"] == name), key=lambda s: s["start_time"])


def _attributes(span: dict[str, Any]) -> dict[str, Any]:
    return span["attributes"]


def test_one_trace_the_agent_span_over_llm_and_tool_spans(traced: TracedTurn) -> None:
    spans = traced.spans
    assert len(spans) == len(traced.sent)
    assert len({s["context"]["trace_id"] for s in spans}) == 1
    [turn] = _named(spans, TURN_SPAN)
    assert turn["parent_id"] is None
    children = [s for s in spans if s is not turn]
    assert {s["parent_id"] for s in children} == {turn["context"]["span_id"]}
    kinds = {s["name"]: s["span_kind"] for s in spans}
    assert kinds == {TURN_SPAN: "AGENT", LLM_SPAN: "LLM", TOOL_SPAN: "TOOL", REFLECT_SPAN: "CHAIN",
                     THINKING_SPAN: "CHAIN"}
    assert [len(_named(spans, n)) for n in (LLM_SPAN, TOOL_SPAN, THINKING_SPAN)] == [2, 1, 1]
    assert len(_named(spans, REFLECT_SPAN)) == len(traced.result.reflections) >= 2
    assert all(s["status_code"] != "ERROR" for s in spans)


def test_token_counts_and_model_name(traced: TracedTurn) -> None:
    llms = _named(traced.spans, LLM_SPAN)
    for span, usage in zip(llms, USAGE, strict=True):
        attributes = _attributes(span)
        assert attributes["llm.model_name"] == attributes["gen_ai.request.model"] == MODEL
        assert attributes["llm.token_count.prompt"] == attributes["gen_ai.usage.input_tokens"] == usage["input_tokens"]
        assert attributes["llm.token_count.completion"] == attributes["gen_ai.usage.output_tokens"] == usage["output_tokens"]
        assert attributes["llm.token_count.total"] == usage["input_tokens"] + usage["output_tokens"]
    [turn] = _named(traced.spans, TURN_SPAN)
    assert _attributes(turn)["gen_ai.agent.name"] == "sales-analyst"
    assert _attributes(turn)["gen_ai.usage.output_tokens"] == traced.result.output_tokens


def test_tool_arguments_and_result(traced: TracedTurn) -> None:
    [span] = _named(traced.spans, TOOL_SPAN)
    attributes = _attributes(span)
    assert attributes["tool.name"] == attributes["gen_ai.tool.name"] == "query_sales"
    assert attributes["gen_ai.tool.call.id"] == "call_sales_1"
    arguments = json.loads(attributes["input.value"])
    assert arguments == {**ARGUMENTS, "password": "[REDACTED]"}
    assert attributes["output.value"].startswith(RESULT)
    assert attributes["output.value"].endswith("(connected with key [REDACTED])")


def test_every_span_names_the_session(traced: TracedTurn) -> None:
    assert [_attributes(s).get("session.id") for s in traced.spans] == [SESSION] * len(traced.spans)
    [turn] = _named(traced.spans, TURN_SPAN)
    assert _attributes(turn)["jupyter_brain.session_id"] == SESSION


def test_nothing_redaction_hides_reaches_phoenix(traced: TracedTurn) -> None:
    assert API_KEY not in traced.raw and SECRET not in traced.raw
    assert "[REDACTED]" in traced.raw
    [turn] = _named(traced.spans, TURN_SPAN)
    assert _attributes(turn)["jupyter_brain.run_context.api_key"] == "[REDACTED]"


def _shown(page: Any, text: str) -> Any:
    """The first element on screen whose whole text is ``text`` (the traces table behind
    the trace view may hold the same names, hidden)."""
    return page.locator(f'text="{text}" >> visible=true').first


def test_phoenix_shows_the_turn_as_a_tree(traced: TracedTurn, phoenix: PhoenixServer) -> None:
    """Phoenix's own trace view of the turn, in headless Debian Chromium: the agent span
    with its llm / tool / reflect / thinking spans, saved as a screenshot to look at."""
    from playwright.sync_api import expect, sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)")
    projects = phoenix.get("/v1/projects").json()["data"]
    project_id = next(p["id"] for p in projects if p["name"] == PROJECT)
    [turn] = _named(traced.spans, TURN_SPAN)
    trace_id = turn["context"]["trace_id"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.set_default_timeout(WAIT_MS)
            page.goto(f"{phoenix.base}/projects/{project_id}/traces/{trace_id}")
            tool_node = _shown(page, TOOL_SPAN)
            expect(tool_node).to_be_visible(timeout=WAIT_MS)  # the span tree has rendered
            for name in (TURN_SPAN, LLM_SPAN, REFLECT_SPAN, THINKING_SPAN):
                expect(_shown(page, name)).to_be_visible(timeout=WAIT_MS)
            tool_node.click()  # the tool span's details: its arguments and result
            expect(page.locator("text=connected with key [REDACTED] >> visible=true").first).to_be_visible(
                timeout=WAIT_MS)
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "phoenix_trace.png"))
            text = page.inner_text("body")
        finally:
            browser.close()
    assert API_KEY not in text and SECRET not in text
