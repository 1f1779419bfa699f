"""Deferred tools: a turn offers the tools it likely needs, and loads the rest on request.

Issue #26: every offered tool's schema is paid for on every request of a turn, so with
semantic selection on (``%agent config max_tools N``) a turn is offered only the N tools
most relevant to its prompt. The others are not lost, the way Anthropic's tool search
defers tools: one small tool, ``find_tools``, names them, and calling it with names or a
need loads the matching ones, so the *next* request of the same turn offers them with
their full schemas. A deferred tool the model calls directly (it knows the name from
``find_tools``' description) runs as usual and is loaded too; one whose result names a
stored artifact loads ``read_artifact``. It works the same for every provider.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from .context.search import bm25_scores, tokenize
from .tools import ToolSpec, tool

FIND_TOOLS = "find_tools"
ARTIFACT_TOOL = "read_artifact"
MAX_MATCHES = 3  # tools a need (not names) loads at most
Schema = dict[str, Any]


@tool(name=FIND_TOOLS, inline=True)
def _find_tools(query: str) -> str:
    """More tools exist for this turn: {names}. Load them for your next call.

    Args:
        query: tool names, or what you need (e.g. 'edit a file').
    """
    raise NotImplementedError("bound to a turn by DeferredTools.spec()")


class DeferredTools:
    """The turn's deferred tool schemas and what has been loaded from them."""

    def __init__(self, deferred: Sequence[Schema]) -> None:
        self._deferred: dict[str, Schema] = {str(s.get("name", "")): s for s in deferred}
        self._loaded: list[Schema] = []  # loaded, not yet handed to the turn
        self._given: set[str] = set()  # every name loaded this turn
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        return bool(self._deferred)

    @property
    def names(self) -> list[str]:
        return list(self._deferred)

    def spec(self) -> ToolSpec:
        """``find_tools`` for this turn: its description names the deferred tools."""
        description = _find_tools.description.replace("{names}", ", ".join(self._deferred))

        def find_tools(query: str) -> str:
            return self.find(query)

        return replace(_find_tools, fn=find_tools, description=description, metadata=dict(_find_tools.metadata))

    def find(self, query: str) -> str:
        """Load the deferred tools ``query`` names, or else those that best fit it."""
        with self._lock:
            words = set(re.findall(r"[A-Za-z0-9_\-]+", query))
            chosen = [n for n in self._deferred if n in words]
            if not chosen and not words & self._given:
                names = list(self._deferred)
                scores = bm25_scores([tokenize(_document(self._deferred[n])) for n in names], tokenize(query))
                order = sorted(range(len(names)), key=lambda k: (-scores[k], k))
                chosen = [names[k] for k in order[:MAX_MATCHES] if scores[k] > 0]
            if not chosen:
                given = sorted(words & self._given)
                if given:
                    return f"Already offered: {', '.join(given)}. Call it directly."
                rest = ", ".join(self._deferred) or "none"
                return f"No tool matches {query!r}. Deferred tools: {rest}."
            loaded = [self._take(name) for name in chosen]
        lines = [f"- {s['name']}: {_first_line(str(s.get('description', '')))}" for s in loaded]
        return "Loaded for your next call:\n" + "\n".join(lines)

    def load(self, names: Iterable[str]) -> None:
        """Load these tools if they are deferred (a direct call, an artifact named)."""
        with self._lock:
            for name in names:
                if name in self._deferred:
                    self._take(name)

    def note_messages(self, messages: Sequence[dict[str, Any]]) -> None:
        """Load what the messages show the turn needs: deferred tools it called, and
        ``read_artifact`` once a tool result names a stored artifact."""
        called = {str(c.get("name", "")) for m in messages for c in m.get("tool_calls") or []}
        if ARTIFACT_TOOL in self._deferred and any(
                m.get("role") == "tool" and f"{ARTIFACT_TOOL}(" in str(m.get("content", "")) for m in messages):
            called.add(ARTIFACT_TOOL)
        self.load(called)

    def take_loaded(self) -> list[Schema]:
        """The schemas loaded since the last call (the turn adds them to its offer)."""
        with self._lock:
            loaded, self._loaded = self._loaded, []
        return loaded

    def _take(self, name: str) -> Schema:
        schema = self._deferred.pop(name)
        self._loaded.append(schema)
        self._given.add(name)
        return schema


def _document(schema: Schema) -> str:
    params = (schema.get("input_schema") or {}).get("properties") or {}
    return " ".join([str(schema.get("name", "")), str(schema.get("description", "")), *map(str, params)])


def _first_line(text: str) -> str:
    return text.strip().split("\n\n")[0].replace("\n", " ")
