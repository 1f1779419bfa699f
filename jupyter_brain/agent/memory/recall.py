"""The harness's two memory hooks: recall at a turn's start, extraction at its end.

Recalled memories become the turn's ``memory`` context layer (rendered into each request,
never into the history), one ``MemoryRecall`` event and ``TurnResult.memories``.
Extraction runs after the turn ended; its model call is added to the session's cost and
noted in the event log. Neither hook can break a turn: a failure is reported and skipped.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..context.layers import ContextLayer
from ..events import ErrorEvent, MemoryRecall
from .base import Memory

if TYPE_CHECKING:
    from ..harness import AgentHarness
    from ..results import TurnResult
    from ..turn import Turn

log = logging.getLogger("jupyter_brain.memory")

RECALL_K = 5  # memories recalled per turn
RECALL_HEADER = (
    "Memories of this project, saved in earlier turns or by the user (they may be out of date: "
    "what the kernel's data shows wins). Use them where they apply:"
)


def render_memories(memories: list[Memory]) -> str:
    return "\n".join([RECALL_HEADER, *(f"- [{m.id}] {m.text}" for m in memories)])


def recall_layers(harness: AgentHarness, turn: Turn, k: int = RECALL_K) -> list[ContextLayer]:
    """The ``memory`` layer of the memories recalled for the turn's message (none found: no layer)."""
    retriever = harness.memory_retriever
    if retriever is None:
        return []
    try:
        found = [m if isinstance(m, Memory) else Memory.model_validate(m)
                 for m in retriever.retrieve(turn.user_message, turn.session_id, k)][:k]
    except Exception as exc:  # noqa: BLE001 - recall is optional: the turn goes on without it
        log.warning("memory recall failed: %s", exc)
        turn.emit(ErrorEvent(kind="memory", message=f"memory recall failed, going on without it: {exc}",
                             recoverable=True))
        return []
    if not found:
        return []
    turn.memories = [m.model_dump(include={"id", "text", "source", "score"}) for m in found]
    turn.emit(MemoryRecall(memories=turn.memories))
    return [ContextLayer.fixed("memory", render_memories(found))]


def extract_after_turn(harness: AgentHarness, turn: Turn, result: TurnResult) -> list[Memory]:
    """Hand the finished turn to the extractor; its usage goes to the session's cost and a
    ``memory_extraction`` record to the event log. Failures are logged, never raised."""
    extractor = harness.memory_extractor
    if extractor is None:
        return []
    kept: list[Memory] = []
    error: str | None = None
    try:
        kept = list(extractor.extract(result, turn.session_id))
    except Exception as exc:  # noqa: BLE001 - the turn already ended; it must stay a success
        error = f"{type(exc).__name__}: {exc}"
        log.warning("memory extraction failed: %s", error)
    error = error or getattr(extractor, "last_error", None)
    record: dict[str, Any] = {"turn_id": turn.turn_id, "memories": [m.id for m in kept], "error": error}
    try:
        usage = getattr(extractor, "last_usage", None)
        if usage is not None:
            cost = harness.cost_of(usage, turn.turn_id, provider=getattr(extractor, "provider", None))
            record.update(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, cost_usd=cost)
        if harness.event_log is not None and (usage is not None or error or kept):
            harness.event_log.add_record("memory_extraction", record, session_id=turn.session_id)
    except Exception as exc:  # noqa: BLE001 - accounting must not break the turn either
        log.warning("memory extraction accounting failed: %s", exc)
    return kept
