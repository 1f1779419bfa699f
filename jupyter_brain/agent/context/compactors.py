"""The compaction strategies (token budget, sliding-window summary, semantic relevance) and
the registry that finds one by name."""

from __future__ import annotations

import copy
from typing import Any

from ...foundation.tokens import text_of
from ..history import Message, units
from .compaction import (
    OMITTED_NOTE,
    CompactionStrategy,
    Summarizer,
    _is_summary,
    omitted_marker,
    summary_message,
)
from .search import bm25_scores, tokenize
from .summary import _transcript


class TokenBudget(CompactionStrategy):
    """Deterministic, no model calls: clear old tool results, then drop the oldest dialogue."""

    name = "token_budget"

    def __init__(self, keep_tool_results: int = 3) -> None:
        self.keep_tool_results = max(0, int(keep_tool_results))

    def __repr__(self) -> str:
        return f"TokenBudget(keep_tool_results={self.keep_tool_results})"

    def _compact(self, messages, b, *, goal, summarize):
        return self._finish_with_budget(messages, b.protect, b, {}, self.keep_tool_results)


def _call_summarizer(summarize: Summarizer | None, old: list[Message]) -> tuple[str | None, str | None]:
    """(summary text, None) or (None, why not)."""
    if summarize is None:
        return None, "no summarizer available"
    try:
        text = summarize(copy.deepcopy(old))
    except Exception as exc:  # noqa: BLE001 - a failed summary falls back, never fails the turn
        return None, f"summarizer failed ({type(exc).__name__}: {exc})"
    if not isinstance(text, str) or not text.strip():
        return None, "summarizer returned no text"
    return text, None


class SlidingWindowSummary(CompactionStrategy):
    """Replace everything before the last ``keep_recent`` units with one model-written summary."""

    name = "summary"

    def __init__(self, keep_recent: int = 6) -> None:
        self.keep_recent = max(0, int(keep_recent))

    def __repr__(self) -> str:
        return f"SlidingWindowSummary(keep_recent={self.keep_recent})"

    def _compact(self, messages, b, *, goal, summarize):
        p = b.protect
        old_units = units(messages[:p])
        if p == len(messages) and old_units:
            old_units = old_units[:-1]  # no current turn: the latest unit still stays
        cut_units = old_units[: len(old_units) - self.keep_recent] if self.keep_recent else old_units
        cut = cut_units[-1].end if cut_units else 0
        old = messages[:cut]
        if not old or all(_is_summary(m) for m in old):
            return self._fallback(messages, b, "nothing old enough to summarize")
        text, why = _call_summarizer(summarize, old)
        if text is None:
            return self._fallback(messages, b, why)
        out = [summary_message(text), *messages[cut:]]
        info: dict[str, Any] = {"summarized": True, "dropped_messages": len(old)}
        return self._finish_with_budget(out, p - cut + 1, b, info)

    def _fallback(self, messages, b, why):
        return self._finish_with_budget(messages, b.protect, b, {"fallback": f"{why}; used token_budget"})


class SemanticRelevance(CompactionStrategy):
    """Keep the older exchanges most relevant to the current goal (BM25), summarize the rest.

    Candidates are whole exchanges (a user message and what followed it), so the output
    never puts two assistant messages side by side; the recent part is extended back to the
    start of its exchange for the same reason.
    """

    name = "semantic"
    SUMMARY_RESERVE_TOKENS = 600  # room left for the summary we have not written yet

    def __init__(self, keep_recent: int = 4) -> None:
        self.keep_recent = max(0, int(keep_recent))

    def __repr__(self) -> str:
        return f"SemanticRelevance(keep_recent={self.keep_recent})"

    def _compact(self, messages, b, *, goal, summarize):
        p = b.protect
        counter = b.counter
        old_units = units(messages[:p])
        if p == len(messages) and old_units:
            old_units = old_units[:-1]
        recent_units = old_units[len(old_units) - self.keep_recent:] if self.keep_recent else []
        start = recent_units[0].start if recent_units else (old_units[-1].end if old_units else 0)
        for j in range(start, -1, -1):
            if j < len(messages) and messages[j].get("role") == "user" and not _is_summary(messages[j]):
                start = j
                break

        summaries = [i for i in range(start) if _is_summary(messages[i])]
        segments: list[list[int]] = []
        for i in range(start):
            if _is_summary(messages[i]):
                continue
            if not segments or (messages[i].get("role") == "user" and segments[-1]):
                segments.append([])
            segments[-1].append(i)
        segments = [s for s in segments if s]
        if not segments:
            return self._fallback(messages, b, "nothing old enough to compact")

        if not goal and p < len(messages):
            goal = text_of(messages[p].get("content"))
        docs = [tokenize(_transcript([messages[i] for i in seg], clip=None)) for seg in segments]
        scores = bm25_scores(docs, tokenize(goal))
        costs = [counter.count_messages(messages[i] for i in seg) for seg in segments]
        if summarize is not None:
            reserve = min(self.SUMMARY_RESERVE_TOKENS, max(0, b.target_raw) // 4)
        else:
            reserve = counter.count_message(omitted_marker())
        room = b.target_raw - counter.count_messages(messages[start:]) - reserve
        keep: set[int] = set()
        for k in sorted(range(len(segments)), key=lambda k: (-scores[k], -k)):
            if scores[k] > 0 and costs[k] <= room:
                keep.add(k)
                room -= costs[k]

        drop_idx = sorted(summaries + [i for k, seg in enumerate(segments) if k not in keep for i in seg])
        if not drop_idx or all(_is_summary(messages[i]) for i in drop_idx):
            return self._fallback(messages, b, "no earlier exchange to summarize")
        dropped = [messages[i] for i in drop_idx]
        info: dict[str, Any] = {"dropped_messages": len(dropped)}
        if summarize is None:
            head = _plain_marker(dropped)
            info["fallback"] = f"no summarizer: {len(dropped)} earlier messages omitted without a summary"
        else:
            text, why = _call_summarizer(summarize, dropped)
            if text is None:
                return self._fallback(messages, b, why)
            head = summary_message(text)
            info["summarized"] = True
        kept = [messages[i] for k in sorted(keep) for i in segments[k]]
        out = [head, *kept, *messages[start:]]
        return self._finish_with_budget(out, p - start + len(kept) + 1, b, info)

    def _fallback(self, messages, b, why):
        return self._finish_with_budget(messages, b.protect, b, {"fallback": f"{why}; used token_budget"})


def _plain_marker(dropped: list[Message]) -> Message:
    """The omitted marker, carrying forward an earlier summary rather than stacking a second."""
    earlier = [text_of(m.get("content")) for m in dropped if _is_summary(m) and m.get("content") != OMITTED_NOTE]
    if not earlier:
        return omitted_marker()
    return {"role": "user", "content": "\n\n".join([*earlier, OMITTED_NOTE]), "kind": "summary"}


_STRATEGIES: dict[str, type[CompactionStrategy]] = {
    "summary": SlidingWindowSummary,
    "sliding": SlidingWindowSummary,
    "sliding_window": SlidingWindowSummary,
    "token_budget": TokenBudget,
    "budget": TokenBudget,
    "semantic": SemanticRelevance,
    "relevance": SemanticRelevance,
    "bm25": SemanticRelevance,
}


def compaction_strategy(name: str, **kw: Any) -> CompactionStrategy:
    """A strategy by name (``summary``, ``token_budget``, ``semantic`` or an alias)."""
    key = (name or "").strip().lower().replace("-", "_")
    cls = _STRATEGIES.get(key)
    if cls is None:
        raise ValueError(f"unknown compaction strategy {name!r}; choose one of: {', '.join(_STRATEGIES)}")
    return cls(**kw)
