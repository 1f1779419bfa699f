"""The thinking phase inside a turn: after each tool cycle, before the next request is
fitted, the turn's history becomes the compressed one (in place, and in the event log, as
a compaction does), a ``ThinkingPhaseEvent`` tells the views, and the phase's model calls
are counted apart from the main ones. A failed phase leaves the history as it was: the
request goes out uncompressed and the turn goes on.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ...providers.base import Usage
from ..events import ThinkingPhaseEvent
from .processor import ThinkingProcessor

if TYPE_CHECKING:
    from ..turn import Turn


class ThinkingPhaseRunner:
    """One turn's thinking phases and their totals (``totals()`` → ``TurnResult`` fields)."""

    def __init__(self, processor: ThinkingProcessor, provider: Any = None) -> None:
        self.processor = processor
        self.provider = provider  # whose prices the phase's calls are charged at
        self.phases = 0
        self.calls = 0
        self.usage = Usage()
        self.cost: float | None = 0.0
        self.saved = 0
        self.fallbacks = 0

    def after_tool_cycle(self, turn: Turn, step: int) -> None:
        """Run the phase when the history ends with tool results (a request follows)."""
        messages = turn.messages
        if not messages or messages[-1].get("role") != "tool":
            return
        started = time.perf_counter()
        workspace = _render(turn.harness.workspace) if self.processor.uses_model else ""
        protect = turn._index_of_prompt(len(messages) - 1)
        try:
            result = self.processor.perform_thinking(
                messages, workspace, None, goal=turn.user_message, protect_from=protect,
                timeout_s=max(1.0, min(60.0, turn.budget.remaining_s())),
            )
        except Exception as exc:  # noqa: BLE001 - the phase is an optimization: never fail the turn
            self.fallbacks += 1
            turn.emit(ThinkingPhaseEvent(
                step=step, strategy=self.processor.strategy.name,
                fallback=f"thinking phase failed ({type(exc).__name__}: {exc}); the request is sent uncompressed",
                duration_ms=(time.perf_counter() - started) * 1000,
            ))
            return
        self.phases += 1
        self._count(turn, result.usage, result.model_calls)
        self.saved += result.tokens_saved
        messages[:] = result.compressed_history
        # The fitter counts the history incrementally; it was rewritten, so count afresh.
        turn.fitter._counted_upto = turn.fitter._counted_tokens = 0
        if turn.history_log is not None:
            turn.history_log.replace_history(turn.session_id, messages)
        turn.persisted = len(messages)
        turn.emit(ThinkingPhaseEvent(
            step=step, strategy=result.strategy, summary=result.summary, current_state=result.current_state,
            insights=result.insights, next_actions=result.next_actions, tokens_before=result.tokens_before,
            tokens_after=result.tokens_after, thinking_tokens=result.thinking_tokens,
            model_calls=result.model_calls, fallback=result.fallback,
            duration_ms=(time.perf_counter() - started) * 1000,
        ))

    def _count(self, turn: Turn, usage: Usage, calls: int) -> None:
        if not calls:
            return
        self.calls += calls
        self.usage = self.usage + usage
        cost = turn.harness.cost_of(usage, turn.turn_id, provider=self.provider, thinking_phase=True)
        self.cost = None if (cost is None or self.cost is None) else self.cost + cost
        turn.cost = None if (cost is None or turn.cost is None) else turn.cost + cost  # the turn's money

    def totals(self) -> dict[str, Any]:
        u = self.usage
        return {
            "thinking_phases": self.phases, "thinking_phase_calls": self.calls,
            "thinking_phase_input_tokens": u.total_input_tokens, "thinking_phase_output_tokens": u.output_tokens,
            "thinking_phase_cost_usd": self.cost, "thinking_phase_tokens_saved": self.saved,
        }


def _render(workspace: Any) -> str:
    if workspace is None:
        return ""
    try:
        return str(workspace() or "")
    except Exception as exc:  # noqa: BLE001 - a broken workspace must not stop the phase
        return f"(workspace context unavailable: {exc})"
