"""Compaction machinery shared by the strategies: the result, the budget, the markers, and
the deterministic budget pass every strategy ends with.

It keeps the rules of ``agent/history.py``: a tool call and its results stay or go
together, the history starts with a user message, and signed thinking blocks are never
edited (assistant messages are kept as the same objects or dropped whole).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ...foundation.tokens import TokenCounter, text_of
from ..history import Message, history_problems, units

log = logging.getLogger(__name__)

Summarizer = Callable[[list[Message]], str]


SUMMARY_HEADER = "[Summary of the earlier conversation]"
OMITTED_NOTE = "[Earlier conversation omitted to stay within the context budget.]"
CLEARED_PREFIX = "[tool result cleared to save context"


def omitted_marker() -> Message:
    return {"role": "user", "content": OMITTED_NOTE, "kind": "summary"}


def summary_message(text: str) -> Message:
    text = text.strip()
    if not text.startswith(SUMMARY_HEADER):
        text = f"{SUMMARY_HEADER}\n{text}"
    return {"role": "user", "content": text, "kind": "summary"}


def _is_summary(msg: Message) -> bool:
    return msg.get("role") == "user" and msg.get("kind") == "summary"


@dataclass
class CompactionResult:
    """What a compaction did. ``tokens_*`` are for the whole request (history + overhead)."""

    messages: list[Message]
    strategy: str
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    summarized: bool = False
    cleared_tool_results: int = 0
    dropped_messages: int = 0
    fallback: str | None = None
    changed: bool = False
    over_budget: bool = False  # even the protected part does not fit the budget


def _normalize_protect(messages: list[Message], protect_from: int) -> int:
    """Clamp into range and move back to a unit start (never inside a tool call's results)."""
    p = max(0, min(int(protect_from), len(messages)))
    while 0 < p < len(messages) and messages[p].get("role") == "tool":
        p -= 1
    return p


def _call_index(messages: Iterable[Message]) -> dict[Any, tuple[str, Any]]:
    return {
        c.get("id"): (c.get("name") or "tool", c.get("arguments"))
        for m in messages
        if m.get("role") == "assistant"
        for c in (m.get("tool_calls") or [])
    }


def _render_args(arguments: Any, limit: int = 120) -> str:
    if isinstance(arguments, dict):
        parts = []
        for k, v in arguments.items():
            r = repr(v)
            parts.append(f"{k}={r if len(r) <= 40 else r[:37] + '...'}")
        text = ", ".join(parts)
    elif arguments in (None, ""):
        text = ""
    else:
        text = str(arguments)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _cleared(msg: Message, call: tuple[str, Any] | None, tokens: int) -> Message:
    name, args = call if call else (msg.get("name") or "tool", None)
    outcome = "returned an error of" if msg.get("is_error") else "returned"
    new = dict(msg)
    new["content"] = f"{CLEARED_PREFIX} — {name}({_render_args(args)}) {outcome} {tokens:,} tokens]"
    return new


class _Budget:
    """The numbers every strategy needs, computed once."""

    def __init__(self, messages, budget_tokens, counter, protect_from, overhead_tokens) -> None:
        self.counter = counter
        self.overhead = max(0, int(overhead_tokens))
        self.protect = _normalize_protect(messages, protect_from)
        self.target_raw = counter._to_raw(max(0, int(budget_tokens) - self.overhead))
        self.raw_before = counter.count_messages(messages)

    def request_tokens(self, raw: int) -> int:
        return self.counter.calibrated(raw) + self.overhead


def _budget_pass(
    messages: list[Message],
    protect: int,
    target_raw: int,
    counter: TokenCounter,
    keep_tool_results: int,
) -> tuple[list[Message], int, int]:
    """Oldest first, until ``messages`` fit ``target_raw``: clear old tool results, drop old
    units, clear the remaining results, drop earlier units of the current turn. Never
    touches ``messages[protect]`` or the last unit. Returns (messages, cleared, dropped)."""
    msgs = list(messages)
    n = len(msgs)
    if n == 0:
        return msgs, 0, 0
    costs = [counter.count_message(m) for m in msgs]
    total = sum(costs)
    marker_cost = counter.count_message(omitted_marker())
    all_units = units(msgs)
    last = all_units[-1]
    alive = [True] * n
    cleared = dropped = 0
    first = 0  # first alive index; only moves forward, as messages only ever die

    def need_marker() -> bool:
        nonlocal first
        while first < n and not alive[first]:
            first += 1
        return first < n and msgs[first].get("role") != "user"

    def fits() -> bool:
        return total + (marker_cost if need_marker() else 0) <= target_raw

    if fits():
        return msgs, 0, 0

    calls = _call_index(msgs)
    tool_idx = [i for i in range(last.start) if msgs[i].get("role") == "tool"]
    all_tools = [i for i in range(n) if msgs[i].get("role") == "tool"]
    recent = set(all_tools[-keep_tool_results:]) if keep_tool_results > 0 else set()

    def clear(indices: Iterable[int]) -> None:
        nonlocal total, cleared
        for i in indices:
            if fits():
                return
            m = msgs[i]
            if not alive[i] or str(m.get("content", "")).startswith(CLEARED_PREFIX):
                continue
            new = _cleared(m, calls.get(m.get("tool_call_id")), counter.count_text(text_of(m.get("content"))))
            new_cost = counter.count_message(new)
            if new_cost < costs[i]:
                msgs[i] = new
                total -= costs[i] - new_cost
                costs[i] = new_cost
                cleared += 1

    def drop(candidates: Iterable[Any]) -> None:
        nonlocal total, dropped
        for u in candidates:
            if fits():
                return
            for i in range(u.start, u.end):
                alive[i] = False
                total -= costs[i]
            dropped += u.end - u.start

    # 1. old tool results, keeping the last few intact
    clear(i for i in tool_idx if i not in recent)
    # 2. old dialogue, oldest first; summaries last (they stand for much more than their size)
    old = [u for u in all_units if u.end <= protect and u != last]
    drop([u for u in old if not _is_summary(msgs[u.start])] + [u for u in old if _is_summary(msgs[u.start])])
    # 3. the results kept intact so far (not the latest unit's: the model has not seen them)
    clear(tool_idx)
    # 4. earlier tool rounds of the current turn
    drop(
        u for u in all_units
        if u.start > protect and u != last and msgs[u.start].get("role") == "assistant"
        and msgs[u.start].get("tool_calls")
    )
    out = [m for i, m in enumerate(msgs) if alive[i]]
    if out and out[0].get("role") != "user":
        out.insert(0, omitted_marker())
    return out, cleared, dropped


class CompactionStrategy:
    """Shrinks a history to a token budget. Subclasses implement ``_compact``."""

    name = "base"

    def compact(
        self,
        messages: list[Message],
        *,
        budget_tokens: int,
        counter: TokenCounter,
        protect_from: int,
        goal: str = "",
        summarize: Summarizer | None = None,
        overhead_tokens: int = 0,
    ) -> CompactionResult:
        """``messages`` is the history without system messages; ``messages[protect_from]``
        is the current user message, which with the last unit is never dropped or changed."""
        messages = list(messages)
        b = _Budget(messages, budget_tokens, counter, protect_from, overhead_tokens)
        result = self._result(messages, messages, b)
        if b.raw_before <= b.target_raw:
            return result
        out, info = self._compact(messages, b, goal=goal, summarize=summarize)
        result = self._result(messages, out, b, **info)
        problems = history_problems(out)
        if problems and not history_problems(messages):
            # A bug must not cost the user the session: send the history as it was.
            log.error("compaction %s produced an invalid history: %s", self.name, problems[0])
            return self._result(messages, messages, b, fallback=f"compaction skipped (invalid result: {problems[0]})")
        return result

    def _compact(self, messages, b: _Budget, *, goal, summarize) -> tuple[list[Message], dict[str, Any]]:
        raise NotImplementedError

    def _result(self, before: list[Message], after: list[Message], b: _Budget, **info: Any) -> CompactionResult:
        raw_after = b.counter.count_messages(after) if after is not before else b.raw_before
        changed = len(before) != len(after) or any(x is not y for x, y in zip(before, after, strict=False))
        return CompactionResult(
            messages=list(after),
            strategy=self.name,
            tokens_before=b.request_tokens(b.raw_before),
            tokens_after=b.request_tokens(raw_after),
            messages_before=len(before),
            messages_after=len(after),
            changed=changed,
            over_budget=raw_after > b.target_raw,
            **info,
        )

    def _finish_with_budget(
        self, out: list[Message], protect: int, b: _Budget, info: dict[str, Any], keep_tool_results: int = 3
    ) -> tuple[list[Message], dict[str, Any]]:
        """Run the token-budget pass on an intermediate result and merge its counts."""
        out, cleared, dropped = _budget_pass(out, protect, b.target_raw, b.counter, keep_tool_results)
        info["cleared_tool_results"] = info.get("cleared_tool_results", 0) + cleared
        info["dropped_messages"] = info.get("dropped_messages", 0) + dropped
        return out, info
