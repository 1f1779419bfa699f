"""What makes a neutral history valid for the next API call, and tools to keep it so.

Compaction, interrupts and crash recovery all cut histories; the rules they must keep
are the providers' rules, written once here:

- the first non-system message is a user message (Anthropic requires it);
- every assistant tool call is answered by a ``tool`` message with its id, right after
  that assistant message and before anything else; no tool message answers nothing;
- tool call ids are unique;
- thinking blocks are either signed, redacted with data, or unsigned text (which the
  Anthropic provider drops); a signed block is never edited (``signature`` kept as is —
  checked by comparing against the original where a caller has one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Message = dict[str, Any]


class HistoryError(ValueError):
    """A history the providers would reject, with the index of the first bad message."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(f"message {index}: {message}")
        self.index = index


def history_problems(messages: list[Message], *, require_final_assistant: bool = False) -> list[str]:
    """Every rule a history breaks, as readable lines (empty when valid)."""
    problems: list[str] = []
    pending: dict[str, int] = {}
    seen_ids: set[str] = set()
    first_dialogue = True
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role == "system":
            continue
        if first_dialogue:
            first_dialogue = False
            if role != "user":
                problems.append(f"message {i}: the history starts with {role!r}, not 'user'")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id not in pending:
                problems.append(f"message {i}: tool result {call_id!r} answers no open tool call")
            else:
                del pending[call_id]
            continue
        if pending:
            problems.append(f"message {i}: {role} message before the results of {sorted(pending)}")
            pending.clear()
        if role == "assistant":
            for call in msg.get("tool_calls") or []:
                call_id = call.get("id")
                if not call_id:
                    problems.append(f"message {i}: a tool call without an id")
                elif call_id in seen_ids:
                    problems.append(f"message {i}: duplicate tool call id {call_id!r}")
                else:
                    seen_ids.add(call_id)
                    pending[call_id] = i
            for block in msg.get("thinking") or []:
                if block.get("redacted") and not block.get("data"):
                    problems.append(f"message {i}: a redacted thinking block without data")
        elif role != "user":
            problems.append(f"message {i}: unknown role {role!r}")
    if pending:
        problems.append(f"end: tool calls {sorted(pending)} have no result")
    if require_final_assistant:
        last = next((m for m in reversed(messages) if m.get("role") != "system"), None)
        if last is None or last.get("role") != "assistant" or last.get("tool_calls"):
            problems.append("end: the history does not end with an assistant answer")
    return problems


def validate_history(messages: list[Message], *, require_final_assistant: bool = False) -> None:
    """Raise ``HistoryError`` for the first broken rule."""
    problems = history_problems(messages, require_final_assistant=require_final_assistant)
    if problems:
        first = problems[0]
        index = int(first.split(":")[0].split()[1]) if first.startswith("message ") else len(messages)
        raise HistoryError(first.split(": ", 1)[1] if ": " in first else first, index)


@dataclass(frozen=True)
class Unit:
    """Messages that stay or go together: one message, or a tool-calling assistant
    message with all its tool results. ``start``/``end`` index the history (end exclusive)."""

    start: int
    end: int

    def messages(self, history: list[Message]) -> list[Message]:
        return history[self.start:self.end]


def units(messages: list[Message]) -> list[Unit]:
    """Split a history into units; a tool call and its results are never split apart."""
    out: list[Unit] = []
    i = 0
    while i < len(messages):
        j = i + 1
        if messages[i].get("role") == "assistant" and messages[i].get("tool_calls"):
            while j < len(messages) and messages[j].get("role") == "tool":
                j += 1
        out.append(Unit(i, j))
        i = j
    return out


def signatures(messages: list[Message]) -> list[tuple[str, str]]:
    """(thinking text, signature) of every signed block, to check none was altered."""
    return [
        (b.get("text", ""), b["signature"])
        for m in messages
        for b in (m.get("thinking") or [])
        if b.get("signature")
    ]


def turn_start(messages: list[Message]) -> int:
    """Index of the current turn's user message (the last user message that is not a
    compaction summary), or ``len(messages)`` when there is none: compaction protects it."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.get("role") == "user" and m.get("kind") != "summary":
            return i
    return len(messages)


def answer_unanswered_calls(messages: list[Message], start: int, content: str) -> list[dict[str, Any]]:
    """Give every tool call from ``messages[start]`` on an error result, in place.

    Each filler goes right after the results its assistant message already has, so the
    history is valid for the next API call. Interrupted turns and histories cut off by a
    crashed kernel both end this way. Returns the calls that had no result.
    """
    filled: list[dict[str, Any]] = []
    answered = {m.get("tool_call_id") for m in messages[start:] if m.get("role") == "tool"}
    i = start
    while i < len(messages):
        msg = messages[i]
        if msg.get("role") != "assistant" or not msg.get("tool_calls"):
            i += 1
            continue
        missing = [c for c in msg["tool_calls"] if c.get("id") not in answered]
        j = i + 1
        while j < len(messages) and messages[j].get("role") == "tool":
            j += 1
        fillers = [
            {"role": "tool", "tool_call_id": c.get("id"), "name": c.get("name", ""), "content": content,
             "is_error": True}
            for c in missing
        ]
        messages[j:j] = fillers
        answered.update(c.get("id") for c in missing)
        filled.extend(missing)
        i = j + len(fillers)
    return filled
