"""What a turn may spend: its own caps, the session's, and a cap shared by several turns.

``SharedBudget`` is one cap for turns that run at the same time (the runs of a
``%%compare``): before a call, a run *reserves* the call's most it could cost; a call is
made only when what all runs spent plus every reservation stays under the cap, so
parallel runs cannot cross it together. A run's reservation is released (its real cost
counted instead) at its next check and when it ends.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


class SharedBudget:
    """``max_cost`` USD for all the turns that share it (``label`` names them in messages)."""

    def __init__(self, max_cost: float, *, label: str = "comparison") -> None:
        if not max_cost > 0:
            raise ValueError(f"a shared cost cap must be positive, not {max_cost!r}")
        self.max_cost = float(max_cost)
        self.label = label
        self._lock = threading.Lock()
        self._runs: dict[str, tuple[float, float]] = {}  # turn_id -> (spent, reserved)

    def __repr__(self) -> str:
        return f"SharedBudget(max_cost={self.max_cost}, spent={self.spent():.6f}, label={self.label!r})"

    def spent(self) -> float:
        """What the turns sharing it spent so far (reservations not included)."""
        with self._lock:
            return sum(spent for spent, _ in self._runs.values())

    def reserve(self, turn_id: str, spent: float, most: float) -> float | None:
        """Count ``spent`` as this turn's so far and reserve ``most`` for its next call.
        Returns None when the call may go; otherwise what all turns have committed (spent
        and reserved), which ``most`` would take over the cap."""
        with self._lock:
            others = sum(s + r for tid, (s, r) in self._runs.items() if tid != turn_id)
            committed = others + spent
            if committed + most > self.max_cost:
                self._runs[turn_id] = (spent, 0.0)
                return committed
            self._runs[turn_id] = (spent, most)
            return None

    def settle(self, turn_id: str, spent: float) -> None:
        """The turn ended (or its call was made): ``spent`` is what it cost, nothing is reserved."""
        with self._lock:
            self._runs[turn_id] = (spent, 0.0)


@dataclass(frozen=True)
class BudgetCaps:
    """A turn's caps (None: no cap). ``max_cost`` and ``max_tokens_total`` bound this turn,
    ``max_session_cost`` the session with its earlier turns (read from the event log),
    ``shared`` a cap this turn shares with others. A warning shows at ``warn_at`` of a cap."""

    max_cost: float | None = None
    max_tokens_total: int | None = None
    max_session_cost: float | None = None
    shared: SharedBudget | None = field(default=None, compare=False)
    warn_at: float = 0.8

    def __post_init__(self) -> None:
        for name in ("max_cost", "max_tokens_total", "max_session_cost"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be positive (or None for no cap), not {value!r}")
        if not 0 < self.warn_at <= 1:
            raise ValueError(f"warn_at is a share of the cap (0 < warn_at <= 1), not {self.warn_at!r}")

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.max_cost, self.max_tokens_total, self.max_session_cost, self.shared))
