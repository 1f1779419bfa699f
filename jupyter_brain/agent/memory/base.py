"""Episodic memory: what it is and the two roles that handle it.

A ``MemoryRetriever`` finds memories relevant to a request; a ``MemoryExtractor`` turns a
finished turn into memories worth keeping. The harness takes either (or one object doing
both, like ``SQLiteMemory``); recalled memories go into their own fresh context layer of
each request, never into the history.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from ..results import TurnResult


class Memory(BaseModel):
    id: str
    text: str
    source: str = ""  # "user" (remembered by hand), "turn:<session>/<turn>", ...
    created: float = Field(default_factory=time.time)
    score: float = 0.0  # relevance to the query it was retrieved for


@runtime_checkable
class MemoryRetriever(Protocol):
    def retrieve(self, query: str, session_id: str, k: int) -> list[Memory]: ...


@runtime_checkable
class MemoryExtractor(Protocol):
    def extract(self, turn: TurnResult, session_id: str) -> list[Memory]: ...
