"""Context levels: how full the context window is, reported only when a threshold is crossed."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Level = Literal["ok", "warning", "critical"]
_RANK = {"ok": 0, "warning": 1, "critical": 2}


@dataclass(frozen=True)
class ContextLevelChange:
    """A threshold was crossed (``previous`` → ``level``)."""

    previous: Level
    level: Level
    tokens: int
    window: int
    ratio: float

    @property
    def rising(self) -> bool:
        return _RANK[self.level] > _RANK[self.previous]


class ContextWarningTracker:
    """Tracks how full the context is and reports only threshold crossings, so the user
    sees one warning when a session gets heavy, not one per request."""

    def __init__(self, context_window: int, warning_ratio: float = 0.70, critical_ratio: float = 0.85) -> None:
        if int(context_window) <= 0:
            raise ValueError(f"context_window must be positive, got {context_window!r}")
        if not (0 < warning_ratio < critical_ratio <= 1):
            raise ValueError(
                "need 0 < warning_ratio < critical_ratio <= 1, "
                f"got warning_ratio={warning_ratio!r}, critical_ratio={critical_ratio!r}"
            )
        self.context_window = int(context_window)
        self.warning_ratio = float(warning_ratio)
        self.critical_ratio = float(critical_ratio)
        self.level: Level = "ok"
        self.last_tokens = 0

    def __repr__(self) -> str:
        return (f"ContextWarningTracker(window={self.context_window}, level={self.level!r}, "
                f"tokens={self.last_tokens})")

    def _threshold(self, ratio: float) -> int:
        return math.floor(round(self.context_window * ratio, 6))

    @property
    def warning_tokens(self) -> int:
        return self._threshold(self.warning_ratio)

    @property
    def critical_tokens(self) -> int:
        return self._threshold(self.critical_ratio)

    @property
    def ratio(self) -> float:
        return self.last_tokens / self.context_window

    def level_for(self, tokens: int) -> Level:
        if tokens >= self.critical_tokens:
            return "critical"
        if tokens >= self.warning_tokens:
            return "warning"
        return "ok"

    def update(self, tokens: int) -> ContextLevelChange | None:
        tokens = max(0, int(tokens))
        self.last_tokens = tokens
        new = self.level_for(tokens)
        if new == self.level:
            return None
        change = ContextLevelChange(self.level, new, tokens, self.context_window, self.ratio)
        self.level = new
        return change

    def reset(self) -> None:
        self.level = "ok"
        self.last_tokens = 0
