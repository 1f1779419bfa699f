"""A cell's budget caps from its settings (``--max-cost``, ``--max-tokens-total``,
``AgentMagics.max_cost_per_session``), and the budget lines of ``%agent cost``: what the
session spent in every kernel (from the event log) against its caps."""

from __future__ import annotations

from typing import Any

from ..agent.cost_caps import BudgetCaps, SessionSpending, session_spending
from ..agent.cost_caps.wording import usd
from ..turn_costs import RECORDED_MARK, recorded_usages


def budget_caps(options: Any) -> BudgetCaps | None:
    """The turn's ``BudgetCaps``, or None when no cap is set (the budget hook sits out)."""
    caps = BudgetCaps(max_cost=getattr(options, "max_cost_per_turn", None),
                      max_tokens_total=getattr(options, "max_tokens_per_turn", None),
                      max_session_cost=getattr(options, "max_cost_per_session", None))
    return caps if caps.active else None


def budget_lines(magics: Any, session_name: str) -> list[str]:
    """``%agent cost``: the session's spending in every kernel, against the caps in force."""
    log = getattr(magics.manager, "event_log", None)
    spent = session_spending(log, session_name) if log is not None else SessionSpending()
    per_session = getattr(magics, "max_cost_per_session", 0.0) or 0.0
    unpriced = f" ({spent.unpriced} without a price)" if spent.unpriced else ""
    turns = f"{spent.turns} turn{'s' * (spent.turns != 1)}"
    if per_session:
        left = max(0.0, per_session - spent.cost_usd)
        lines = [f"budget: session {session_name} spent {usd(spent.cost_usd)} of its {usd(per_session)} cap "
                 f"({spent.cost_usd / per_session:.0%}, {usd(left)} left) over {turns} in every kernel{unpriced}"]
    else:
        lines = [f"budget: session {session_name} spent {usd(spent.cost_usd)} over {turns} in every kernel{unpriced}; "
                 "no session cap (AgentMagics.max_cost_per_session)"]
    per_turn = getattr(magics, "max_cost_per_turn", 0.0) or 0.0
    tokens = getattr(magics, "max_tokens_per_turn", 0) or 0
    caps = [f"{usd(per_turn)} per turn" if per_turn else "", f"{tokens:,} tokens per turn" if tokens else ""]
    shown = " and ".join(c for c in caps if c)
    last = ""
    if spent.turns:
        last_cost = "price unknown" if spent.last_cost_usd is None else usd(spent.last_cost_usd)
        last = f"; the last turn: {last_cost}, {spent.last_tokens:,} tokens"
        recorded = list(recorded_usages(log, session_name).values())[-1:] if log is not None else []
        if recorded and recorded[0] and not spent.last_tokens:
            # It replayed, spending nothing now: what it cost when recorded, marked so.
            r = recorded[0]
            tokens_then = sum(int(r.get(k) or 0) for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                                            "cache_creation_tokens"))
            then = "price unknown" if r.get("cost_usd") is None else usd(r["cost_usd"])
            last = f"; the last turn: {RECORDED_MARK}{then}, {tokens_then:,} tokens"
    lines.append(f"        turn caps: {shown} (--max-cost, --max-tokens-total){last}" if shown
                 else f"        no turn cap (--max-cost, --max-tokens-total; AgentMagics.max_cost_per_turn){last}")
    return lines
