"""OpenTelemetry spans of a turn, from its events (``agent/tracing/spans.py``).

Checked once per turn: without a configured tracer provider the integration builds no
hook and imports nothing of OpenTelemetry, so an untraced turn pays nothing per event. The one moment no event marks, a model
call's start, is the ``before_model_call`` point.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ...events import EventBase
from ...hooks import ModelRequest, TurnContext, TurnHook
from ...tracing import active_tracer

if TYPE_CHECKING:
    from ...tracing.spans import TurnTracer


class TracingIntegration:
    """Spans for every turn while a tracer provider is configured."""

    name = "tracing"

    def __init__(self, redact: Callable[[str], str], agent_name: str) -> None:
        self.redact = redact  # span attributes are masked like the event log
        self.agent_name = agent_name

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        tracer = active_tracer()
        if tracer is None:
            return None
        from ...tracing.spans import TurnTracer  # imports OpenTelemetry: only for a traced turn

        return TracingHook(TurnTracer(tracer, self.redact, agent_name=self.agent_name))


class TracingHook(TurnHook):
    name = "tracing"
    logger = "jupyter_brain.tracing"

    def __init__(self, tracer: TurnTracer) -> None:
        self.tracer = tracer

    def on_event(self, ctx: TurnContext, event: EventBase) -> None:
        self.tracer.on_event(event)

    def before_model_call(self, ctx: TurnContext, request: ModelRequest) -> ModelRequest:
        self.tracer.mark("llm", request.step)  # the call (this attempt) begins: its span's start
        return request
