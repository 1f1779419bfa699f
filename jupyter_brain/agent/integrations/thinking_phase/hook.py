"""The thinking phase inside a turn: after each tool cycle, before the next request is
fitted, the turn's history becomes the compressed one (the loop stores it, as after a
compaction), a ``ThinkingPhaseEvent`` tells the views, and the phase's model calls are
counted apart from the main ones (``TurnResult.thinking_phase_*``). A failed phase is
its own fallback event: the request goes out uncompressed and the turn goes on.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ....foundation.tokens import TokenCounter
from ....providers.base import Usage
from ...context.compaction import CompactionStrategy
from ...events import ThinkingPhaseEvent
from ...hooks import CheckedProvider, HistoryView, TurnContext, TurnHook
from ...thinking_phase.processor import ThinkingProcessor

Message = dict[str, Any]


@dataclass(frozen=True)
class ThinkingPhaseIntegration:
    """``AgentHarness(thinking_phase=True, thinking_strategy=..., thinking_provider=...)``.

    ``provider`` writes the phase's summaries and is charged for them (``token_budget``
    calls none); each turn gets a fresh processor and fresh totals.
    """

    name: ClassVar[str] = "thinking_phase"
    strategy: CompactionStrategy
    provider: Any
    counter: TokenCounter

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        # Its calls pass the turn's before_model_call first (a budget cap counts them too).
        checked = None if self.provider is None else CheckedProvider(self.provider, ctx.check_call, "thinking_phase")
        processor = ThinkingProcessor(self.strategy, provider=checked, counter=self.counter)
        return ThinkingPhaseHook(processor, self.provider)


class ThinkingPhaseHook(TurnHook):
    """One turn's thinking phases and their totals."""

    name = "thinking_phase"

    def __init__(self, processor: ThinkingProcessor, provider: Any = None) -> None:
        self.processor = processor
        self.provider = provider  # whose prices the phase's calls are charged at
        self.phases = 0
        self.calls = 0
        self.usage = Usage()
        self.cost: float | None = 0.0
        self.saved = 0
        self.fallbacks = 0

    def process_history(self, ctx: TurnContext, history: HistoryView) -> list[Message] | None:
        """The compressed history, when it ends with tool results (a request follows)."""
        messages = list(history.messages)
        if not messages or messages[-1].get("role") != "tool":
            return None
        started = time.perf_counter()
        workspace = _render(ctx.workspace) if self.processor.uses_model else ""
        try:
            result = self.processor.perform_thinking(
                messages, workspace, None, goal=ctx.user_message, protect_from=history.prompt_index,
                timeout_s=max(1.0, min(60.0, ctx.time_left())),
            )
        except Exception as exc:  # noqa: BLE001 - the phase's own fallback, shown as such
            self.fallbacks += 1
            ctx.emit(ThinkingPhaseEvent(
                step=history.step, strategy=self.processor.strategy.name,
                fallback=f"thinking phase failed ({type(exc).__name__}: {exc}); the request is sent uncompressed",
                duration_ms=(time.perf_counter() - started) * 1000,
            ))
            return None
        self.phases += 1
        self._count(ctx, result.usage, result.model_calls)
        self.saved += result.tokens_saved
        ctx.emit(ThinkingPhaseEvent(
            step=history.step, strategy=result.strategy, summary=result.summary,
            current_state=result.current_state, insights=result.insights, next_actions=result.next_actions,
            tokens_before=result.tokens_before, tokens_after=result.tokens_after,
            thinking_tokens=result.thinking_tokens, model_calls=result.model_calls, fallback=result.fallback,
            duration_ms=(time.perf_counter() - started) * 1000,
        ))
        return list(result.compressed_history)

    def _count(self, ctx: TurnContext, usage: Usage, calls: int) -> None:
        if not calls:
            return
        self.calls += calls
        self.usage = self.usage + usage
        cost = ctx.charge_usage(usage, provider=self.provider, thinking_phase=True)  # the turn's money too
        self.cost = None if (cost is None or self.cost is None) else self.cost + cost

    def result_fields(self, ctx: TurnContext) -> Mapping[str, Any]:
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
    except Exception as exc:  # noqa: BLE001 - a broken workspace is said in the phase's text
        return f"(workspace context unavailable: {exc})"
