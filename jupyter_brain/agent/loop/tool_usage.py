"""Model usage beside the turn's own calls: the hooks' side calls, and what a tool made on
the turn's behalf (an MCP server's sampling request); and what the turn spent so far.

A tool's usage arrives from the tool's thread (``ToolContext.usage``) and counts like the turn's own
calls: in its tokens and cost, so in its cost cap (``ctx.spent``), priced from the model
catalogue as a side call of that model and recorded on the session's costs, shown as a
``usage`` event with a label and the call it was made for.
"""

from __future__ import annotations

from typing import Any

from ...providers.base import Usage
from ..events import UsageEvent
from ..hooks import Spent
from ..tool_context import current_tool_context


class _Named:
    """A model named by a tool's usage report, as the pricing reads a provider."""

    def __init__(self, name: str, model: str) -> None:
        self.name, self.model = name, model


def charge_tool_usage(turn: Any, provider: str, model: str, input_tokens: int, output_tokens: int,
                      cost_usd: float | None, label: str) -> None:
    """Count it into ``turn`` (a ``Turn``); ``cost_usd`` is used when the catalogue has no price."""
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    with turn._usage_lock:
        if turn.emit.closing:  # the turn's totals are final
            return
        priced = turn.setup.price(usage, turn.turn_id, provider=_Named(provider, model))
        cost = priced if priced is not None else cost_usd
        turn.totals["input_tokens"] += input_tokens
        turn.totals["output_tokens"] += output_tokens
        turn.cost = None if (cost is None or turn.cost is None) else turn.cost + cost
    context = current_tool_context()
    turn.emit(UsageEvent(step=turn.step, input_tokens=input_tokens, output_tokens=output_tokens, cost_usd=cost,
                         label=label, call_id=context.call_id if context is not None else None))


def charge_side_usage(turn: Any, usage: Usage, *, provider: Any = None, thinking_phase: bool = False) -> float | None:
    """A hook's model call: priced and recorded on the session's costs; while the turn
    runs, its cost is the turn's too (not its tokens: those count the main calls)."""
    cost = turn.setup.price(usage, turn.turn_id, provider=provider, thinking_phase=thinking_phase)
    with turn._usage_lock:
        if not turn.emit.closing:
            turn.cost = None if (cost is None or turn.cost is None) else turn.cost + cost
            turn.side_tokens += usage.total_input_tokens + usage.output_tokens
    return cost


def spent(turn: Any) -> Spent:
    """What every model call of the turn used so far, side calls and tools' usage included."""
    t = turn.totals
    tokens = t["input_tokens"] + t["cache_read_tokens"] + t["cache_creation_tokens"] + t["output_tokens"]
    return Spent(tokens=tokens + turn.side_tokens, cost_usd=turn.cost)
