"""Tool selection: offer the model only the tools most relevant to the request."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ...foundation.tokens import ToolSchema
from .search import bm25_scores, tokenize


def _tool_document(schema: ToolSchema, keywords: str = "") -> list[str]:
    params = (schema.get("input_schema") or {}).get("properties") or {}
    name = str(schema.get("name", ""))
    # The name counts twice: it is the densest description of what a tool does.
    return tokenize(" ".join([name, name, str(schema.get("description", "")), *map(str, params), keywords]))


def select_tools(
    schemas: Sequence[ToolSchema], query: str, max_tools: int, *, always: Iterable[str] = (),
    boosts: Mapping[str, float] | None = None, keywords: Mapping[str, str] | None = None,
) -> list[ToolSchema]:
    """At most ``max_tools`` schemas most relevant to ``query`` (BM25), in their original
    order; tools named in ``always`` are included regardless. Fewer tools keep requests small
    and the model's choice sharp. ``boosts`` (tool name -> extra score, e.g. from a
    ``ToolUsageLearner``) are added to the scores scaled so the best lexical match is 1.
    ``keywords`` (tool name -> words, ``@tool(keywords=...)``) are matched as if they were
    in the description, and cost no tokens: they are never sent."""
    schemas = list(schemas)
    if len(schemas) <= max_tools:
        return schemas
    wanted = set(always)
    pinned = {i for i, s in enumerate(schemas) if s.get("name") in wanted}
    rest = [i for i in range(len(schemas)) if i not in pinned]
    slots = max(0, int(max_tools) - len(pinned))
    words = keywords or {}
    scores = bm25_scores([_tool_document(schemas[i], words.get(str(schemas[i].get("name")), "")) for i in rest],
                         tokenize(query or ""))
    if boosts:
        top = max(scores, default=0.0) or 1.0
        scores = [s / top + boosts.get(str(schemas[i].get("name")), 0.0) for s, i in zip(scores, rest, strict=True)]
    ranked = sorted(range(len(rest)), key=lambda k: (-scores[k], rest[k]))
    chosen = pinned | {rest[k] for k in ranked[:slots]}
    return [s for i, s in enumerate(schemas) if i in chosen]
