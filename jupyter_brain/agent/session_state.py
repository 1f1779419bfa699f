"""What a conversation learns across its turns, kept by the session, not the harness.

A notebook builds a new harness for every cell (the cell's flags may change the provider
or the limits). What the conversation has learned must not be thrown away with it: the
token counter's calibration against the provider's own counts, the context level the
last request reached, and the thinking manager's counters.
"""

from __future__ import annotations

from ..foundation.tokens import TokenCounter
from .context import ContextWarningTracker
from .thinking import ThinkingConfig, ThinkingManager


class SessionState:
    """The counter, the context tracker and the thinking state of one conversation."""

    def __init__(self, counter: TokenCounter | None = None) -> None:
        self.counter = counter or TokenCounter()
        self._tracker: ContextWarningTracker | None = None
        self._thinking: ThinkingManager | None = None

    def __repr__(self) -> str:
        level = self._tracker.level if self._tracker is not None else "ok"
        return f"SessionState(level={level!r}, calibration={self.counter.factor:.3f})"

    def context_tracker(self, budget_tokens: int) -> ContextWarningTracker:
        """The session's tracker measured against ``budget_tokens``; a changed budget keeps
        the level the context had, so the next change is reported from where it stood."""
        if self._tracker is None:
            self._tracker = ContextWarningTracker(budget_tokens)
        elif self._tracker.context_window != budget_tokens:
            self._tracker.context_window = int(budget_tokens)
        return self._tracker

    def thinking_manager(self, config: ThinkingConfig) -> ThinkingManager:
        """The session's thinking manager, with this cell's think level and reflection rules."""
        if self._thinking is None:
            self._thinking = ThinkingManager(config)
        else:
            self._thinking.config = config
        return self._thinking
