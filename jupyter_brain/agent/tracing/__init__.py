"""OpenTelemetry spans of a turn, built from its event stream (optional: ``tracing`` extra).

Off, and free, unless ``opentelemetry-api`` is imported and a real tracer provider is
configured (``trace.set_tracer_provider(TracerProvider())``, or ``use_tracer_provider``):
the check runs once per turn and builds nothing otherwise.
"""

from __future__ import annotations

from .activation import active_tracer, turn_tracer, use_tracer_provider

__all__ = ["active_tracer", "turn_tracer", "use_tracer_provider"]
