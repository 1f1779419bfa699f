"""Whether a turn is traced: checked once per turn, at no cost when tracing is off.

A tracer provider can only have been configured by code that imported
``opentelemetry.trace``; while that module is not loaded, tracing is off without
importing anything. The API's default (proxy) and no-op providers also mean off.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from ..redact import Redactor

if TYPE_CHECKING:
    from .spans import TurnTracer

log = logging.getLogger("jupyter_brain.tracing")

INSTRUMENTATION_NAME = "jupyter_brain"

_override: Any = None  # a provider for jupyter-brain's spans only (use_tracer_provider)
_memo: tuple[Any, Any] | None = None  # (provider, its tracer): the last one asked for


def use_tracer_provider(provider: Any = None) -> None:
    """Send jupyter-brain's spans to ``provider`` instead of the global one (``None``:
    back to the global provider)."""
    global _override
    _override = provider


def active_tracer() -> Any | None:
    """The tracer for this turn's spans, or None when tracing is off."""
    provider = _override
    if provider is None:
        trace = sys.modules.get("opentelemetry.trace")
        if trace is None:  # never imported (or not installed): nobody configured a provider
            return None
        provider = trace.get_tracer_provider()
        if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
            return None
    global _memo
    if _memo is None or _memo[0] is not provider:
        from ...foundation.version import __version__

        _memo = (provider, provider.get_tracer(INSTRUMENTATION_NAME, __version__))
    return _memo[1]


def turn_tracer(harness: Any) -> TurnTracer | None:
    """A span builder for one turn of ``harness`` (an ``AgentHarness``), or None when
    tracing is off. A broken tracing setup is logged and leaves the turn untraced. (A
    turn's spans come from the tracing integration, ``agent/integrations/tracing``.)"""
    try:
        tracer = active_tracer()
        if tracer is None:
            return None
        from .spans import TurnTracer

        settings = harness.settings
        redact = harness.redactor or Redactor(settings.secrets)
        return TurnTracer(tracer, redact, agent_name=settings.agent_id)
    except Exception:  # an optional integration must not break the turn
        log.warning("OpenTelemetry tracing is configured but failed to start; this turn is not traced",
                    exc_info=True)
        return None
