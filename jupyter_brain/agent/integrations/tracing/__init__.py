"""Tracing in a turn: the event stream as OpenTelemetry spans (``agent/tracing``)."""

from .hook import TracingIntegration

__all__ = ["TracingIntegration"]
