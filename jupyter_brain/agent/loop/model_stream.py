"""One model call of a turn, translated into events.

A provider answers with a stream of ``StreamEvent``s (or one ``ProviderResult`` when not
streaming); the views see ``TextDelta`` / ``ThinkingDelta`` / ``ToolCallStart`` ... events,
and strategy text is parsed into ``StrategyStepEvent``s as it arrives. A cut-short call
(Ctrl-C, a cancel, the deadline) is a returned value carrying the text already shown,
never an exception with data attached.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...foundation.interrupts import INTERRUPTS, is_interrupt
from ...providers.base import LLMProvider, ProviderError, ProviderResult, close_stream
from ...providers.capabilities import ReportsFallbacks
from ..budget import TurnBudget
from ..callbacks import AgentCallbacks
from ..events import (
    StrategyStepEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ToolCallArgsDelta,
    ToolCallStart,
)
from ..strategies import ReasoningStrategy
from .fallbacks import reporting_fallbacks

Emit = Callable[[Any], None]


@dataclass
class ModelOutcome:
    """The call's result, or why there is none: ``interrupted`` (Ctrl-C) or stopped (a
    cancel or the deadline), with the text the user already saw in ``partial``."""

    result: ProviderResult | None
    partial: str = ""
    interrupted: bool = False


class StrategyFeed:
    """Feeds a strategy's parser with the model's text; each parsed step becomes an event."""

    def __init__(self, strategy: ReasoningStrategy | None, sink: list[Any], step: int, emit: Emit) -> None:
        self.strategy = strategy
        self.parser = strategy.parser() if strategy is not None else None
        self.sink = sink
        self.step = step
        self.emit = emit

    def feed(self, text: str, *, final: bool = False) -> None:
        if self.parser is None or self.strategy is None:
            return
        steps = self.parser.feed(text) if text else []
        if final:
            steps += self.parser.finish()
        for s in steps:
            self.sink.append(s)
            self.emit(StrategyStepEvent(step=self.step, strategy=self.strategy.name, data=s.model_dump()))


@dataclass
class ModelCall:
    """Everything one call needs; ``run`` makes it."""

    provider: LLMProvider
    request: list[dict[str, Any]]
    tool_schemas: list[dict[str, Any]]
    step: int
    emit: Emit
    callbacks: AgentCallbacks
    strategy: StrategyFeed
    timeout_s: float
    thinking_budget: int
    cancel: threading.Event | None  # with the budget's deadline: end the stream early
    budget: TurnBudget
    announced: set[str]  # tool call ids whose ToolCallStart was emitted (the tool step skips them)
    received: int = 0  # stream events yielded so far (a failure after the first is mid-stream)

    def run(self, stream: bool) -> ModelOutcome:
        if isinstance(self.provider, ReportsFallbacks):  # a provider chain: its switches become events
            with reporting_fallbacks(self.provider, self.emit, self.step):
                return self._stream() if stream else self._whole()
        return self._stream() if stream else self._whole()

    def _whole(self) -> ModelOutcome:
        result = self.provider.generate(self.request, self.tool_schemas, timeout_s=self.timeout_s,
                                        thinking_budget=self.thinking_budget)
        shown = ""
        step, emit = self.step, self.emit
        try:
            for block in result.thinking:
                if block.text:
                    emit(ThinkingDelta(step=step, text=block.text))
                    emit(ThinkingEnd(step=step))
            if result.text:
                shown = result.text
                emit(TextDelta(step=step, text=result.text))
                self.callbacks.fire("on_stream_chunk", result.text)
            self.strategy.feed(result.text, final=True)
        except INTERRUPTS as exc:  # as when streaming: the text the user saw stays
            if not is_interrupt(exc):
                raise
            return ModelOutcome(None, shown, interrupted=True)
        return ModelOutcome(result)

    def _stream(self) -> ModelOutcome:
        events = self.provider.generate_stream(self.request, self.tool_schemas, timeout_s=self.timeout_s,
                                               thinking_budget=self.thinking_budget)
        step, emit, cancel, budget = self.step, self.emit, self.cancel, self.budget
        on_chunk = self.callbacks.fire if self.callbacks.wants("on_stream_chunk") else None
        partial: list[str] = []
        thinking_open = False
        try:
            for ev in events:
                self.received += 1
                if (cancel is not None and cancel.is_set()) or budget.is_expired():
                    if thinking_open:
                        emit(ThinkingEnd(step=step))
                    self.strategy.feed("", final=True)
                    return ModelOutcome(None, "".join(partial))
                kind = ev.type
                if kind == "text":
                    if thinking_open:
                        emit(ThinkingEnd(step=step))
                        thinking_open = False
                    partial.append(ev.text)
                    emit(TextDelta(step=step, text=ev.text))
                    if on_chunk is not None:
                        on_chunk("on_stream_chunk", ev.text)
                    self.strategy.feed(ev.text)
                elif kind == "thinking":
                    thinking_open = True
                    emit(ThinkingDelta(step=step, text=ev.text))
                elif kind == "thinking_end":
                    if thinking_open:
                        emit(ThinkingEnd(step=step))
                    thinking_open = False
                elif kind == "tool_call_start":
                    if thinking_open:
                        emit(ThinkingEnd(step=step))
                        thinking_open = False
                    call_id = ev.tool_call_id or f"idx{ev.index}"
                    self.announced.add(call_id)
                    emit(ToolCallStart(step=step, call_id=call_id, name=ev.name or "?"))
                elif kind == "tool_call_args":
                    emit(ToolCallArgsDelta(step=step, call_id=ev.tool_call_id or f"idx{ev.index}", delta=ev.text))
                elif kind == "done" and ev.result is not None:
                    if thinking_open:
                        emit(ThinkingEnd(step=step))
                    self.strategy.feed("", final=True)
                    return ModelOutcome(ev.result)
        except INTERRUPTS as exc:  # Ctrl-C, also while an event's validator was being built
            if not is_interrupt(exc):
                raise
            if thinking_open:
                emit(ThinkingEnd(step=step))
            return ModelOutcome(None, "".join(partial), interrupted=True)
        finally:
            close_stream(events)
        raise ProviderError("the stream ended without a final result", kind="stream",
                            provider=getattr(self.provider, "name", None))
