"""SessionCostTracker: what each turn and the whole session cost.

Prices and the model-name matching live in the model catalogue
(``jupyter_brain.foundation.catalog``); they are re-exported here so the old import path
keeps working.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..foundation.catalog import FREE_PROVIDERS, PRICES, ModelPrice, price_for
from ..providers.base import Usage

__all__ = ["FREE_PROVIDERS", "PRICES", "ModelPrice", "SessionCostTracker", "TurnCost", "price_for"]


@dataclass
class TurnCost:
    turn_id: str
    model: str | None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0  # everything the turn cost, the thinking phase included
    # The thinking phase's own model calls (``agent/thinking_phase``), not in ``usage``.
    thinking_phase_usage: Usage = field(default_factory=Usage)
    thinking_phase_calls: int = 0
    thinking_phase_cost_usd: float | None = 0.0

    @property
    def estimated(self) -> bool:
        """Some of this turn's usage was counted locally (the server reported none)."""
        return self.usage.estimated


class SessionCostTracker:
    def __init__(self, prices: dict[str, ModelPrice] | None = None) -> None:
        self.prices = dict(PRICES if prices is None else prices)
        self.turns: list[TurnCost] = []  # in order; ``_by_id`` finds one without a scan
        self._by_id: dict[str, TurnCost] = {}
        # (turn_id, (model, provider), price): a turn's calls share one price lookup.
        self._price_memo: tuple[str, tuple[str | None, str | None], ModelPrice | None] | None = None
        self._lock = threading.Lock()

    def cost_of(self, usage: Usage, model: str | None, provider: str | None = None) -> float | None:
        price = price_for(model, provider, self.prices)
        return None if price is None else price.cost(usage)

    def record(self, turn_id: str, usage: Usage, model: str | None, provider: str | None = None, *,
               thinking_phase: bool = False) -> float | None:
        """Add usage to a turn (creating it on first use); returns this usage's cost. A
        thinking-phase call is counted apart (``thinking_phase_*``) and in the turn's cost."""
        with self._lock:
            memo = self._price_memo
            if memo is None or memo[0] != turn_id or memo[1] != (model, provider):
                memo = self._price_memo = (turn_id, (model, provider), price_for(model, provider, self.prices))
            price = memo[2]
            cost = None if price is None else price.cost(usage)
            turn = self._by_id.get(turn_id)
            if turn is None or not self._listed(turn):
                turn = TurnCost(turn_id=turn_id, model=model)
                self.turns.append(turn)
                self._by_id[turn_id] = turn
            if thinking_phase:
                turn.thinking_phase_usage = turn.thinking_phase_usage + usage
                turn.thinking_phase_calls += 1
                tc = turn.thinking_phase_cost_usd
                turn.thinking_phase_cost_usd = None if (cost is None or tc is None) else tc + cost
            else:
                turn.usage = turn.usage + usage
            turn.cost_usd = None if (cost is None or turn.cost_usd is None) else turn.cost_usd + cost
        return cost

    def _listed(self, turn: TurnCost) -> bool:
        """Still in ``turns`` (a caller may have edited the list): O(1) for the running turn."""
        return bool(self.turns) and self.turns[-1] is turn or any(t is turn for t in self.turns)

    def turn(self, turn_id: str) -> TurnCost | None:
        found = self._by_id.get(turn_id)
        if found is not None and self._listed(found):
            return found
        return next((t for t in self.turns if t.turn_id == turn_id), None)

    @property
    def total_usage(self) -> Usage:
        total = Usage()
        for t in self.turns:
            total = total + t.usage
        return total

    @property
    def total_cost_usd(self) -> float | None:
        """Sum over turns; None if any turn's price is unknown."""
        costs = [t.cost_usd for t in self.turns]
        return None if any(c is None for c in costs) else sum(costs)  # type: ignore[arg-type]

    def summary(self) -> dict[str, object]:
        usage = self.total_usage
        return {"turns": len(self.turns), **usage.model_dump(), "cost_usd": self.total_cost_usd,
                "usage_estimated": usage.estimated}
