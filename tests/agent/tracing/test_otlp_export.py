"""The spans reach an OTLP/HTTP collector: the real exporter posts protobuf to a local
receiver (a tiny http.server standing in for Phoenix or an OpenTelemetry Collector),
decoded with opentelemetry-proto."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.agent.tracing import use_tracer_provider
from jupyter_brain.agent.tracing.spans import LLM_SPAN, TOOL_SPAN, TURN_SPAN
from jupyter_brain.providers.scripted import ScriptedProvider


class _Receiver(BaseHTTPRequestHandler):
    requests: list[tuple[str, str, ExportTraceServiceRequest]] = []

    def do_POST(self) -> None:  # http.server calls it by this name
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        message = ExportTraceServiceRequest()
        message.ParseFromString(body)
        self.requests.append((self.path, self.headers.get("Content-Type", ""), message))
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[tuple[str, list[tuple[str, str, ExportTraceServiceRequest]]]]:
    received: list[tuple[str, str, ExportTraceServiceRequest]] = []
    handler = type("Receiver", (_Receiver,), {"requests": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/traces", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@tool
def lookup(key: str) -> str:
    """Look a value up."""
    return f"{key}=1"


def test_spans_arrive_at_an_otlp_http_collector(collector) -> None:
    endpoint, received = collector
    provider = TracerProvider(resource=Resource.create({"service.name": "notebook-under-test"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint, timeout=10)))
    use_tracer_provider(provider)
    try:
        script = [{"text": "", "tool_calls": [{"id": "k1", "name": "lookup", "arguments": {"key": "a"}}]}, "a is 1"]
        harness = AgentHarness(ScriptedProvider(script, model="scripted-model"), AgentToolRegistry([lookup]), None,
                               prompt_id="otlp-test")
        assert harness.run_turn("s", [], "what is a?").status == "completed"
        assert provider.force_flush(timeout_millis=10_000)
    finally:
        use_tracer_provider(None)
        provider.shutdown()

    assert received, "the collector received nothing"
    assert {path for path, _, _ in received} == {"/v1/traces"}
    assert {ctype for _, ctype, _ in received} == {"application/x-protobuf"}
    spans = [span for _, _, message in received for resource in message.resource_spans
             for scope in resource.scope_spans for span in scope.spans]
    names = [span.name for span in spans]
    assert sorted(names) == sorted([TURN_SPAN, LLM_SPAN, LLM_SPAN, TOOL_SPAN])
    resource_attributes = {a.key: a.value.string_value for _, _, m in received
                           for r in m.resource_spans for a in r.resource.attributes}
    assert resource_attributes["service.name"] == "notebook-under-test"
    turn = next(span for span in spans if span.name == TURN_SPAN)
    assert {a.key: a.value.string_value for a in turn.attributes}["jupyter_brain.prompt.id"] == "otlp-test"
    assert all(span.parent_span_id == turn.span_id for span in spans if span is not turn)
    llm = next(span for span in spans if span.name == LLM_SPAN)
    assert {a.key: a.value.int_value for a in llm.attributes}["gen_ai.usage.output_tokens"] > 0
