"""Episodic memory: what it is and the two roles that handle it.

A ``MemoryRetriever`` finds memories relevant to a request; a ``MemoryExtractor`` turns a
finished turn into memories worth keeping. The harness takes either (or one object doing
both, like ``SQLiteMemory``); recalled memories go into their own fresh context layer of
each request, never into the history.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from ..results import TurnResult


MAX_TEXT_CHARS = 500  # a memory is one fact, not a document
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_SPACE = re.compile(r"\s+")


def clean_text(text: str) -> str:
    """One line of plain text: control characters dropped, whitespace collapsed."""
    return _SPACE.sub(" ", _CONTROL.sub(" ", str(text))).strip()


class Memory(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validators built on first use, not at import (#40)

    id: str
    text: str
    source: str = ""  # "user" (remembered by hand), "turn:<session>/<turn>", ...
    created: float = Field(default_factory=time.time)
    score: float = 0.0  # relevance to the query it was retrieved for


@runtime_checkable
class MemoryRetriever(Protocol):
    def retrieve(self, query: str, session_id: str, k: int) -> list[Memory]: ...


class MemoryStore(MemoryRetriever, Protocol):
    """Where extracted memories go (``SQLiteMemory``)."""

    def add(self, text: str, source: str = ..., *, session_id: str | None = None) -> Memory: ...


@runtime_checkable
class MemoryExtractor(Protocol):
    def extract(self, turn: TurnResult, session_id: str) -> list[Memory]: ...
