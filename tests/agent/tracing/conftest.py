"""Fixtures of the tracing tests: the OpenTelemetry SDK's in-memory exporter."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from jupyter_brain.agent.tracing import use_tracer_provider


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    """Spans of the turns run in the test (jupyter-brain's own provider, not the global one)."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    use_tracer_provider(provider)
    try:
        yield memory
    finally:
        use_tracer_provider(None)
        provider.shutdown()
