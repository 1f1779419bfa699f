"""Summaries for compaction: the instruction, the transcript a model summarizes, and a
summarizer backed by a provider."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...foundation.tokens import text_of
from ..history import Message
from .compaction import Summarizer, _is_summary, _render_args

SUMMARY_INSTRUCTION = (
    "You compress an agent's working conversation so it can continue within its context "
    "window. Write a concise summary of the transcript you are given: the user's goals and "
    "requests, decisions and conclusions, facts and numbers found (with the files, variables "
    "and tools they came from), what was done and what is still open. Keep names, paths and "
    "values exact. Write plain prose or short bullets; do not address the user, do not invent."
)


def _transcript(messages: Iterable[Message], *, clip: int | None = 2_000, text_clip: int | None = 8_000) -> str:
    def cut(text: str, limit: int | None) -> str:
        if limit is None or len(text) <= limit:
            return text
        return f"{text[:limit]}… [{len(text) - limit:,} more characters]"

    lines: list[str] = []
    for m in messages:
        role = m.get("role")
        content = text_of(m.get("content")).strip()
        if role == "user":
            label = "Earlier summary" if _is_summary(m) else "User"
            lines.append(f"{label}: {cut(content, text_clip)}")
        elif role == "assistant":
            if content:
                lines.append(f"Assistant: {cut(content, text_clip)}")
            for c in m.get("tool_calls") or []:
                lines.append(f"Assistant called {c.get('name')}({_render_args(c.get('arguments'), 300)})")
        elif role == "tool":
            kind = "error" if m.get("is_error") else "result"
            lines.append(f"Tool {kind} ({m.get('name') or 'tool'}): {cut(content, clip)}")
    return "\n\n".join(lines)


def summary_request(messages: list[Message], *, result_chars: int = 2_000) -> list[Message]:
    """Neutral messages for the model call that writes a compaction summary. The system
    message carries ``"kind": "summary_request"`` (the scripted provider answers those from
    its own queue)."""
    transcript = _transcript(messages, clip=result_chars)
    return [
        {"role": "system", "content": SUMMARY_INSTRUCTION, "kind": "summary_request"},
        {"role": "user", "content": f"<transcript>\n{transcript}\n</transcript>\n\nSummarize the transcript above."},
    ]


def provider_summarizer(provider: Any, *, timeout_s: float = 30.0) -> Summarizer:
    """A ``summarize`` callable backed by ``provider.generate`` (no tools)."""

    def summarize(messages: list[Message]) -> str:
        return provider.generate(summary_request(messages), [], timeout_s=timeout_s).text

    return summarize
