"""The thinking phase's state without a model: insights kept from tool results, a digest of
what was done, and the ``[Thinking]`` message that carries them in the history.

Extractive on purpose: it needs no model call, and a value found in a tool result is
kept verbatim (a model's summary may paraphrase or drop it). The model-written parts
(``processor.py``) are added on top, never instead.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ...foundation.tokens import text_of
from ..context.compaction import CLEARED_PREFIX, _render_args
from ..context.search import tokenize
from ..history import Message

THINKING_PREFIX = "[Thinking]"

_SEGMENT = re.compile(r"(?<=[.!?;])\s+|\n+")
_WORD = re.compile(r"[A-Za-z]{3,}")
_VALUE = re.compile(r"\d|\b[A-Z][A-Z0-9_-]{1,}\b")
_PROBLEM = re.compile(r"error|exception|traceback|failed|not found|missing|warning|invalid", re.I)
_SECTION = re.compile(r"^(Summary|State|Insights|Next):\s*(.*)$")


def is_thinking_message(msg: Message) -> bool:
    return msg.get("role") == "user" and str(msg.get("content") or "").startswith(THINKING_PREFIX)


def salient_segments(text: str, goal_terms: set[str], *, limit: int = 3, max_chars: int = 240) -> list[str]:
    """The statements in a tool result worth keeping: sentences or lines with at least three
    words that carry a value (a number, a code) or report a problem, or share words with the
    goal; the best ``limit`` of them, in their order. Rows of bare data (``a=1; b=2``) are
    not statements and stay behind; the workspace and the last results show current data."""
    scored: list[tuple[float, int, str]] = []
    for i, raw in enumerate(_SEGMENT.split(text)):
        seg = raw.strip(" \t;,")
        words = _WORD.findall(seg)
        if len(words) < 3:
            continue
        overlap = len({w.lower() for w in words} & goal_terms)
        value, problem = bool(_VALUE.search(seg)), bool(_PROBLEM.search(seg))
        if not (value or problem or overlap):
            continue
        score = 2.0 * overlap + 2.0 * value + 3.0 * problem
        scored.append((score, i, seg if len(seg) <= max_chars else seg[: max_chars - 1] + "…"))
    best = sorted(scored, key=lambda t: (-t[0], t[1]))[:limit]
    return [seg for _, _, seg in sorted(best, key=lambda t: t[1])]


def call_index(messages: Iterable[Message]) -> dict[Any, tuple[str, Any]]:
    return {
        c.get("id"): (c.get("name") or "tool", c.get("arguments"))
        for m in messages if m.get("role") == "assistant"
        for c in (m.get("tool_calls") or [])
    }


def result_insights(results: Iterable[Message], calls: dict[Any, tuple[str, Any]], goal: str,
                    *, per_result: int = 3) -> list[str]:
    """Insights from tool results not cleared yet, each prefixed with the call it came from."""
    terms = set(tokenize(goal))
    out: list[str] = []
    for msg in results:
        content = text_of(msg.get("content"))
        if content.startswith(CLEARED_PREFIX):
            continue
        name, args = calls.get(msg.get("tool_call_id"), (msg.get("name") or "tool", None))
        for seg in salient_segments(content, terms, limit=per_result):
            out.append(f"{name}({_render_args(args, 60)}): {seg}")
    return out


def merge_insights(old: list[str], new: list[str], limit: int) -> list[str]:
    """Earlier insights first, new ones after, no repeats; the oldest go past ``limit``."""
    seen: set[str] = set()
    merged: list[str] = []
    for item in [*old, *new]:
        key = " ".join(item.lower().split())
        if item.strip() and key not in seen:
            seen.add(key)
            merged.append(item.strip())
    return merged[-limit:] if limit > 0 else []


def action_digest(messages: list[Message]) -> str:
    """What was done, compactly: each tool with its number of calls and first/last arguments."""
    calls = [c for m in messages if m.get("role") == "assistant" for c in (m.get("tool_calls") or [])]
    if not calls:
        return "no tool calls yet"
    errors = sum(1 for m in messages if m.get("role") == "tool" and m.get("is_error"))
    counts = Counter(c.get("name") or "tool" for c in calls)
    parts = []
    for name, n in counts.items():
        mine = [c for c in calls if (c.get("name") or "tool") == name]
        first, last = _render_args(mine[0].get("arguments"), 40), _render_args(mine[-1].get("arguments"), 40)
        span = f"({first})" if n == 1 else f"×{n} ({first} … {last})"
        parts.append(f"{name} {span}")
    tail = f"; {errors} returned errors" if errors else ""
    return f"{len(calls)} tool calls: " + ", ".join(parts) + tail


def last_assistant_text(messages: list[Message]) -> str:
    for m in reversed(messages):
        if m.get("role") == "assistant":
            text = text_of(m.get("content")).strip()
            if text:
                return text if len(text) <= 300 else text[:299] + "…"
    return ""


def render(summary: str, state: str, insights: list[str], next_actions: str) -> str:
    lines = [THINKING_PREFIX]
    if summary:
        lines.append(f"Summary: {summary}")
    if state:
        lines.append(f"State: {state}")
    if insights:
        lines.append("Insights:")
        lines.extend(f"- {item}" for item in insights)
    if next_actions:
        lines.append(f"Next: {next_actions}")
    return "\n".join(lines)


def parse(text: str) -> dict[str, Any]:
    """The sections of a ``[Thinking]`` message or a model's answer (``Summary:``,
    ``State:``, ``Insights:`` with ``-`` bullets, ``Next:``); text outside any section is
    the summary."""
    out: dict[str, Any] = {"summary": "", "state": "", "insights": [], "next": ""}
    section = "summary"
    loose: list[str] = []
    for raw in text.replace(THINKING_PREFIX, "", 1).splitlines():
        line = raw.strip()
        if not line:
            continue
        m = _SECTION.match(line.replace("**", ""))
        if m:
            section = m.group(1).lower()
            line = m.group(2).strip()
            if not line:
                continue
        if section == "insights":
            out["insights"].append(line.lstrip("-*• ").strip())
        elif section in ("state", "next"):
            out[section] = f"{out[section]} {line}".strip()
        elif m:
            out["summary"] = f"{out['summary']} {line}".strip()
        else:
            loose.append(line)
    if loose:
        out["summary"] = " ".join([out["summary"], *loose]).strip()
    return out
