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


def estimate_call(messages: Sequence[dict[str, Any]], tool_schemas: Sequence[dict[str, Any]], provider: Any,
                  counter: TokenCounter, *, thinking_budget: int = 0) -> CallEstimate:
    """The most the call could cost. Input is priced as uncached input (no cache discount
    is assumed: the estimate is an upper bound)."""
    input_tokens = counter.estimate_request(messages, tool_schemas)
    output_tokens = output_allowance(provider, thinking_budget)
    model, name = getattr(provider, "model", None), getattr(provider, "name", None)
    price = price_for(model, name)
    cost = None if price is None else (input_tokens * price.input + output_tokens * price.output) / 1_000_000
    return CallEstimate(input_tokens, output_tokens, cost, str(model or name or "the model"))
