"""``%agent sessions / new / use / reset / history``: which conversation cells continue."""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from ..notebook_session import session_notice
from .text import clip, count_arg


def cmd_sessions(magics: Any, rest: list[str]) -> None:
    manager = magics.manager
    for name in manager.known():
        turns = len(manager.event_log.turns(name))
        mark = "*" if name == manager.current.name else " "
        print(f"{mark} {name}  ({turns} turn{'s' * (turns != 1)})")


def cmd_new(magics: Any, rest: list[str]) -> None:
    try:
        session = magics.manager.new(rest[0] if rest else None)
    except ValueError as exc:
        raise UsageError(f"%agent new: {exc}") from None
    print(f"new session: {session.name}")


def cmd_use(magics: Any, rest: list[str]) -> None:
    if len(rest) != 1:
        raise UsageError("%agent use NAME: give exactly one session name")
    try:
        session = magics.manager.use(rest[0])
    except ValueError as exc:
        raise UsageError(f"%agent use: {exc}") from None
    notice = session_notice(session, "")  # "continuing session X (N turns)" when it picked earlier turns up
    print(notice or f"session: {session.name} ({len(session.history)} messages in history)")


def cmd_reset(magics: Any, rest: list[str]) -> None:
    session = magics.manager.current
    session.reset()
    print(f"session {session.name}: history cleared")


def cmd_history(magics: Any, rest: list[str]) -> None:
    count = count_arg(rest, "history", default=20)
    session = magics.manager.current
    messages = session.history[-count:]
    if not messages:
        print(f"session {session.name}: no history yet")
    for msg in messages:
        print(message_line(msg))


def message_line(msg: dict[str, Any]) -> str:
    """A history message on one line (tool calls indented below an assistant message)."""
    role = msg.get("role", "?")
    if role == "tool":
        flag = " (error)" if msg.get("is_error") else ""
        return f"tool {msg.get('name', '?')}{flag}: {clip(msg.get('content', ''))}"
    line = f"{role}: {clip(msg.get('content', ''))}"
    for call in msg.get("tool_calls", []):
        line += f"\n  → {call['name']}({clip(call.get('arguments'), 60)})"
    return line
