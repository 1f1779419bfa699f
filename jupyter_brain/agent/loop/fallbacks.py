"""A provider chain's switches as ``ProviderFallback`` events.

``providers/`` cannot import the agent, so a ``ChainProvider`` reports each switch to a
listener (``on_fallback``); while a step's model call runs, that listener emits the event
(the views show one line, the event log keeps it). Who answered is the chain's active
member afterwards: ``answered_by`` names it for ``TurnResult.providers_used``. Calls
outside a step's model call (a compaction summary, a reflection) may fall through too,
silently: the listener is set only for the step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from ...providers.capabilities import ReportsFallbacks
from ...providers.chain import FallbackNotice, provider_label
from ..events import ProviderFallback

__all__ = ["answered_by", "reporting_fallbacks"]


def reporting_fallbacks(provider: Any, emit: Callable[[Any], None], step: int) -> AbstractContextManager[None]:
    """Emit a ``ProviderFallback`` for each switch the provider makes during the block;
    the provider's previous listener is restored after it. A provider that is not a chain
    gets a bare ``nullcontext`` (this runs for every model call)."""
    if not isinstance(provider, ReportsFallbacks):
        return nullcontext()
    return _listening(provider, emit, step)


@contextmanager
def _listening(provider: ReportsFallbacks, emit: Callable[[Any], None], step: int) -> Iterator[None]:
    def listener(notice: FallbackNotice) -> None:
        emit(ProviderFallback(step=step, failed=notice.failed, next=notice.next, kind=notice.kind,
                              message=notice.message))

    previous, provider.on_fallback = provider.on_fallback, listener
    try:
        yield
    finally:
        provider.on_fallback = previous


def answered_by(provider: Any) -> str:
    """``name:model`` of the provider that answered the last call (a chain's active member)."""
    return provider_label(provider)
