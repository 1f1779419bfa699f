"""OpenTelemetry spans of a turn, from its events (``agent/tracing/spans.py``).

Checked once per turn: without a configured tracer provider the integration builds no
hook and imports nothing of OpenTelemetry, so an untraced turn pays nothing per event.
The hook is the library's ``TurnTracer`` itself: each event goes straight to it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from ...hooks import TurnContext, TurnHook
from ...tracing import active_tracer


@dataclass(frozen=True)
class TracingIntegration:
    """Spans for every turn while a tracer provider is configured."""

    name: ClassVar[str] = "tracing"
    redact: Callable[[str], str]  # span attributes are masked like the event log
    agent_name: str

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        tracer = active_tracer()
        if tracer is None:
            return None
        from ...tracing.spans import TurnTracer  # imports OpenTelemetry: only for a traced turn

        return TurnTracer(tracer, self.redact, agent_name=self.agent_name)
