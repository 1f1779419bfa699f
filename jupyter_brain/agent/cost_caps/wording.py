"""How a budget stop and a budget warning read: what was spent, the cap, what the next
call could cost, and how to go on (the flag or setting that raises the cap)."""

from __future__ import annotations

import math

from .estimate import CallEstimate

# scope -> (what it is called, how to raise it)
SCOPES = {
    "turn": ("this turn's cost cap", "--max-cost {value} (or AgentMagics.max_cost_per_turn)"),
    "tokens": ("this turn's token cap", "--max-tokens-total {value} (or AgentMagics.max_tokens_per_turn)"),
    "session": ("the session's cost cap", "AgentMagics.max_cost_per_session = {value}, or start a new session (--new)"),
    "comparison": ("the comparison's cost cap (all runs together)", "--max-cost {value}"),
}


def usd(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def amount(value: float, unit: str) -> str:
    return usd(value) if unit == "usd" else f"{int(value):,} tokens"


def suggest(needed: float, cap: float, unit: str) -> str:
    """A cap that would let the call go: twice the old one, at least what is needed, in
    two significant figures (rounded up)."""
    value = max(2 * cap, needed)
    digits = math.floor(math.log10(value)) - 1 if value > 0 else 0
    step = 10.0 ** digits
    rounded = math.ceil(round(value / step, 6)) * step  # (0.06 / 0.001 is 60.00000000000001)
    return str(int(rounded)) if unit == "tokens" or rounded >= 10 else f"{rounded:.{max(0, -digits)}f}".rstrip("0").rstrip(".")


def stop_message(scope: str, spent: float, cap: float, unit: str, call: CallEstimate, purpose: str) -> str:
    """The turn's final text when a call could cross a cap (the call was not made)."""
    name, how = SCOPES[scope]
    what = "the next model call" if purpose == "step" else f"the next model call ({purpose.replace('_', ' ')})"
    most = usd(call.cost_usd) if unit == "usd" and call.cost_usd is not None else f"{call.tokens:,} tokens"
    spent_word = "spent by all runs" if scope == "comparison" else "used" if unit == "tokens" else "spent"
    earlier = " (earlier turns included)" if scope == "session" else ""
    return (f"Budget: stopped before {what}, which could cross {name}: {amount(spent, unit)} {spent_word}{earlier} "
            f"of {amount(cap, unit)}, and the call could take up to {most} ({call.input_tokens:,} tokens in, up to "
            f"{call.output_tokens:,} out). The call was not made. The history is kept: continue in a new cell, or "
            f"raise the cap: {how.format(value=suggest(spent + (call.cost_usd or 0) if unit == 'usd' else spent + call.tokens, cap, unit))}.")


def unpriced_message(model: str) -> str:
    """A cost cap on a model without a known price cannot be checked: the call is not made."""
    return (f"Budget: stopped before the next model call: {model} has no known price, so a cost cap cannot be "
            "checked. Use a token cap instead (--max-tokens-total N), or no cost cap for this model.")


def warning_message(scope: str, spent: float, cap: float, unit: str) -> str:
    """``80% of this turn's cost cap used: $0.0800 of $0.1000``."""
    share = spent / cap if cap else 1.0
    return f"{share:.0%} of {SCOPES[scope][0]} used: {amount(spent, unit)} of {amount(cap, unit)}"
