"""Recall at a turn's start, extraction after its end.

Recalled memories become the turn's ``memory`` context layer (rendered into each request,
never into the history), one ``MemoryRecall`` event and ``TurnResult.memories``.
Extraction runs after the turn ended; its model call is added to the session's cost and
noted in the event log as a ``memory_extraction`` record, with the extractor's error if
it failed (the turn is already a success by then).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ...context.layers import ContextLayer
from ...events import MemoryRecall
from ...hooks import TurnContext, TurnHook
from ...memory.base import Memory, MemoryExtractor, MemoryRetriever
from ...memory.recall import RECALL_K, recall, render_memories
from ...results import TurnResult

LOGGER = "jupyter_brain.memory"
log = logging.getLogger(LOGGER)


@dataclass(frozen=True)
class MemoryIntegration:
    """``AgentHarness(memory_retriever=..., memory_extractor=...)``; off without either."""

    name: ClassVar[str] = "memory"
    retriever: MemoryRetriever | None
    extractor: MemoryExtractor | None

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        if self.retriever is None and self.extractor is None:
            return None
        return MemoryHook(self.retriever, self.extractor)


class MemoryHook(TurnHook):
    name = "memory"
    logger = LOGGER

    def __init__(self, retriever: MemoryRetriever | None, extractor: MemoryExtractor | None) -> None:
        self.retriever = retriever
        self.extractor = extractor
        self.memories: list[dict[str, Any]] = []

    def context_layers(self, ctx: TurnContext) -> list[ContextLayer]:
        """The ``memory`` layer of the memories recalled for the turn's message (none found: no layer)."""
        if self.retriever is None:
            return []
        found = recall(self.retriever, ctx.user_message, ctx.session_id, RECALL_K)
        if not found:
            return []
        self.memories = [m.model_dump(include={"id", "text", "source", "score"}) for m in found]
        ctx.emit(MemoryRecall(memories=self.memories))
        return [ContextLayer.fixed("memory", render_memories(found))]

    def result_fields(self, ctx: TurnContext) -> Mapping[str, Any]:
        return {"memories": self.memories}

    def after_turn(self, ctx: TurnContext, result: TurnResult) -> None:
        """Hand the finished turn to the extractor; its usage to the session's cost and a
        ``memory_extraction`` record to the event log."""
        extractor = self.extractor
        if extractor is None:
            return
        kept: list[Memory] = []
        error: str | None = None
        try:
            kept = list(extractor.extract(result, ctx.session_id))
        except Exception as exc:  # noqa: BLE001 - the failure is the record's, not the turn's
            error = f"{type(exc).__name__}: {exc}"
            log.warning("memory extraction failed: %s", error)
        error = error or getattr(extractor, "last_error", None)
        record: dict[str, Any] = {"turn_id": ctx.turn_id, "memories": [m.id for m in kept], "error": error}
        usage = getattr(extractor, "last_usage", None)
        if usage is not None:
            cost = ctx.charge_usage(usage, provider=getattr(extractor, "provider", None))
            record.update(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, cost_usd=cost)
        if usage is not None or error or kept:
            ctx.record("memory_extraction", record)
