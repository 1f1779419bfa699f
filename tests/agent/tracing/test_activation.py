"""Tracing is on only with a real tracer provider, and costs nothing otherwise: no spans,
no tracer on the emitter, not even an import of OpenTelemetry by a turn."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tracing import active_tracer, turn_tracer, use_tracer_provider
from jupyter_brain.providers.scripted import ScriptedProvider


def _harness() -> AgentHarness:
    return AgentHarness(ScriptedProvider(["hi"]), None, None)


def test_off_with_the_api_default_and_no_op_providers(monkeypatch) -> None:
    use_tracer_provider(None)
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)  # nothing configured here
    assert active_tracer() is None and turn_tracer(_harness()) is None
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: trace.NoOpTracerProvider())
    assert active_tracer() is None


def test_on_with_a_global_sdk_provider(monkeypatch) -> None:
    use_tracer_provider(None)
    provider = TracerProvider()
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    assert active_tracer() is not None
    assert turn_tracer(_harness()) is not None


def test_off_when_opentelemetry_cannot_be_imported(monkeypatch, caplog) -> None:
    use_tracer_provider(None)
    for name in [m for m in sys.modules if m == "opentelemetry" or m.startswith("opentelemetry.")]:
        monkeypatch.setitem(sys.modules, name, None)  # `import opentelemetry…` now raises ImportError
    with pytest.raises(ImportError):
        import opentelemetry.trace  # noqa: F401
    with caplog.at_level(logging.WARNING, logger="jupyter_brain.tracing"):
        assert turn_tracer(_harness()) is None
        assert _harness().run_turn("s", [], "hello").status == "completed"
    assert caplog.text == ""  # off by design, not a failed start


def test_a_plain_turn_imports_no_opentelemetry() -> None:
    code = textwrap.dedent("""
        import sys
        from jupyter_brain.agent.harness import AgentHarness
        from jupyter_brain.providers.scripted import ScriptedProvider
        result = AgentHarness(ScriptedProvider(["hi"]), None, None).run_turn("s", [], "hello")
        assert result.status == "completed", result
        print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


class _BrokenTracer:
    def start_span(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError("exporter misconfigured")


class _BrokenProvider:
    def get_tracer(self, *args: object, **kwargs: object) -> _BrokenTracer:
        return _BrokenTracer()


def test_a_broken_tracing_setup_never_breaks_the_turn(caplog) -> None:
    use_tracer_provider(_BrokenProvider())
    try:
        with caplog.at_level(logging.WARNING, logger="jupyter_brain.tracing"):
            result = _harness().run_turn("s", [], "hello")
    finally:
        use_tracer_provider(None)
    assert result.status == "completed" and result.text == "hi"
    assert "tracing failed" in caplog.text


def test_a_tracing_failure_mid_turn_still_exports_what_was_traced(caplog) -> None:
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from jupyter_brain.agent.tools import AgentToolRegistry, tool
    from jupyter_brain.agent.tracing.spans import TOOL_SPAN, TURN_SPAN

    memory = InMemorySpanExporter()
    sdk = TracerProvider()
    sdk.add_span_processor(SimpleSpanProcessor(memory))
    real = sdk.get_tracer("test")

    class FailsOnTools:
        def start_span(self, name: str, *args: object, **kwargs: object) -> object:
            if name == TOOL_SPAN:
                raise RuntimeError("attribute limit exceeded")
            return real.start_span(name, *args, **kwargs)  # type: ignore[arg-type]

    class Provider:
        def get_tracer(self, *args: object, **kwargs: object) -> FailsOnTools:
            return FailsOnTools()

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    script = [{"text": "", "tool_calls": [{"id": "p1", "name": "ping", "arguments": {}}]}, "done"]
    use_tracer_provider(Provider())
    try:
        with caplog.at_level(logging.WARNING, logger="jupyter_brain.tracing"):
            result = AgentHarness(ScriptedProvider(script), AgentToolRegistry([ping]), None).run_turn("s", [], "q")
    finally:
        use_tracer_provider(None)
    assert result.status == "completed" and result.text == "done"
    assert [s.name for s in memory.get_finished_spans()].count(TURN_SPAN) == 1  # ended when tracing failed
    assert "tracing failed" in caplog.text
