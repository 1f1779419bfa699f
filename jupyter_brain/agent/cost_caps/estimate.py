"""The most a model call could cost, before it is made: its input tokens counted with
the session's calibrated counter, plus the output it may write (the provider's
``max_tokens``, and the thinking budget on top), times the model's price."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...foundation.catalog import price_for
from ...foundation.tokens import TokenCounter

# The output a call may write when its provider sets no ``max_tokens`` (an OpenAI-compatible
# server's own limit is unknown to us): a common default of such servers.
DEFAULT_OUTPUT_TOKENS = 4096


@dataclass(frozen=True)
class CallEstimate:
    """A call's input tokens, the output it may write, and the most it could cost (None:
    the model has no known price)."""

    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    model: str = ""

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def output_allowance(provider: Any, thinking_budget: int = 0) -> int:
    """The output tokens a call may produce: ``max_tokens`` (or the default) + thinking."""
    limit = getattr(provider, "max_tokens", None)
    base = int(limit) if isinstance(limit, int) and limit > 0 else DEFAULT_OUTPUT_TOKENS
    return base + max(0, int(thinking_budget or 0))


def answering(provider: Any, messages: Sequence[dict[str, Any]], tool_schemas: Sequence[dict[str, Any]],
              thinking_budget: int = 0) -> list[Any]:
    """The providers that could answer this call, for its price: a replay's own recording
    (free) when the call will be replayed, else its live provider (``priced_as``); every
    member of a chain, since any of them may take the call over."""
    priced_as = getattr(type(provider), "priced_as", None)
    if callable(priced_as):
        provider = provider.priced_as(messages, tool_schemas, thinking_budget)
    members = getattr(provider, "members", None)
    return list(members) if isinstance(members, tuple) and members else [provider]


def estimate_call(messages: Sequence[dict[str, Any]], tool_schemas: Sequence[dict[str, Any]], provider: Any,
                  counter: TokenCounter, *, thinking_budget: int = 0) -> CallEstimate:
    """The most the call could cost: the dearest provider that could answer it. Input is
    priced as uncached input (no cache discount is assumed: the estimate is an upper bound)."""
    input_tokens = counter.estimate_request(messages, tool_schemas)
    worst: CallEstimate | None = None
    for candidate in answering(provider, messages, tool_schemas, thinking_budget):
        output_tokens = output_allowance(candidate, thinking_budget)
        model, name = getattr(candidate, "model", None), getattr(candidate, "name", None)
        price = price_for(model, name)
        cost = None if price is None else (input_tokens * price.input + output_tokens * price.output) / 1_000_000
        estimate = CallEstimate(input_tokens, output_tokens, cost, str(model or name or "the model"))
        if worst is None or _dearer(estimate, worst):
            worst = estimate
    assert worst is not None  # answering() names at least one provider
    return worst


def _dearer(a: CallEstimate, b: CallEstimate) -> bool:
    """Priced beats unpriced (a chain's local fallback has no price, its hosted model does);
    between priced calls the higher cost, between unpriced ones the longer output."""
    if (a.cost_usd is None) != (b.cost_usd is None):
        return a.cost_usd is not None
    if a.cost_usd is not None and b.cost_usd is not None:
        return a.cost_usd > b.cost_usd
    return a.output_tokens > b.output_tokens
