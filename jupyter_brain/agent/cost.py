"""SessionCostTracker: what each turn and the whole session cost, from a price table.

Prices are US dollars per million tokens: (input, output, cache read, cache write).
Model ids are matched by their longest known prefix, so dated ids
("claude-sonnet-4-5-20250929") find their family. Unknown models cost ``None`` (not 0)
so a view can say "price unknown" rather than "free"; local servers are free.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..providers.base import Usage


@dataclass(frozen=True)
class ModelPrice:
    input: float
    output: float
    cache_read: float
    cache_write: float

    def cost(self, usage: Usage) -> float:
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_creation_tokens * self.cache_write
        ) / 1_000_000


PRICES: dict[str, ModelPrice] = {
    "claude-opus-4": ModelPrice(15.0, 75.0, 1.50, 18.75),
    "claude-opus-4-5": ModelPrice(5.0, 25.0, 0.50, 6.25),
    "claude-sonnet-4": ModelPrice(3.0, 15.0, 0.30, 3.75),
    "claude-3-7-sonnet": ModelPrice(3.0, 15.0, 0.30, 3.75),
    "claude-3-5-sonnet": ModelPrice(3.0, 15.0, 0.30, 3.75),
    "claude-haiku-4": ModelPrice(1.0, 5.0, 0.10, 1.25),
    "claude-3-5-haiku": ModelPrice(0.80, 4.0, 0.08, 1.0),
    "gpt-4o-mini": ModelPrice(0.15, 0.60, 0.075, 0.15),
    "gpt-4o": ModelPrice(2.50, 10.0, 1.25, 2.50),
    "gpt-4.1-nano": ModelPrice(0.10, 0.40, 0.025, 0.10),
    "gpt-4.1-mini": ModelPrice(0.40, 1.60, 0.10, 0.40),
    "gpt-4.1": ModelPrice(2.0, 8.0, 0.50, 2.0),
    "o3-mini": ModelPrice(1.10, 4.40, 0.55, 1.10),
    "o4-mini": ModelPrice(1.10, 4.40, 0.275, 1.10),
    "scripted": ModelPrice(0.0, 0.0, 0.0, 0.0),
}
FREE_PROVIDERS = {"ollama", "vllm", "scripted", "lmstudio"}


def price_for(model: str | None, provider: str | None = None, table: dict[str, ModelPrice] | None = None) -> ModelPrice | None:
    if provider in FREE_PROVIDERS:
        return ModelPrice(0.0, 0.0, 0.0, 0.0)
    if not model:
        return None
    table = PRICES if table is None else table  # an empty table prices nothing
    name = model.lower().split("/")[-1]
    best = max((k for k in table if name.startswith(k)), key=len, default=None)
    return table[best] if best else None


@dataclass
class TurnCost:
    turn_id: str
    model: str | None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0


class SessionCostTracker:
    def __init__(self, prices: dict[str, ModelPrice] | None = None) -> None:
        self.prices = dict(PRICES if prices is None else prices)
        self.turns: list[TurnCost] = []
        self._lock = threading.Lock()

    def cost_of(self, usage: Usage, model: str | None, provider: str | None = None) -> float | None:
        price = price_for(model, provider, self.prices)
        return None if price is None else price.cost(usage)

    def record(self, turn_id: str, usage: Usage, model: str | None, provider: str | None = None) -> float | None:
        """Add usage to a turn (creating it on first use); returns this usage's cost."""
        cost = self.cost_of(usage, model, provider)
        with self._lock:
            turn = next((t for t in self.turns if t.turn_id == turn_id), None)
            if turn is None:
                turn = TurnCost(turn_id=turn_id, model=model)
                self.turns.append(turn)
            turn.usage = turn.usage + usage
            turn.cost_usd = None if (cost is None or turn.cost_usd is None) else turn.cost_usd + cost
        return cost

    def turn(self, turn_id: str) -> TurnCost | None:
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
        return {"turns": len(self.turns), **usage.model_dump(), "cost_usd": self.total_cost_usd}
