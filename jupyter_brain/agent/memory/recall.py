"""Recalling memories for a turn: which ones, and how they read in the request.

The memory integration (``agent/integrations/memory``) renders them as the turn's
``memory`` context layer (into each request, never into the history).
"""

from __future__ import annotations

from .base import Memory, MemoryRetriever

RECALL_K = 5  # memories recalled per turn
RECALL_HEADER = (
    "Memories of this project, saved in earlier turns or by the user (they may be out of date: "
    "what the kernel's data shows wins). Use them where they apply:"
)


def recall(retriever: MemoryRetriever, query: str, session_id: str, k: int = RECALL_K) -> list[Memory]:
    """At most ``k`` memories for ``query`` (a retriever may hand back plain mappings)."""
    return [m if isinstance(m, Memory) else Memory.model_validate(m)
            for m in retriever.retrieve(query, session_id, k)][:k]


def render_memories(memories: list[Memory]) -> str:
    return "\n".join([RECALL_HEADER, *(f"- [{m.id}] {m.text}" for m in memories)])
