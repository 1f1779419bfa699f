"""ACP session updates as our events, so every view (widget, text, log) shows an outside
agent's turn as it shows ours. The same mapping runs live and on replay.

``agent_message_chunk`` → ``TextDelta``; ``agent_thought_chunk`` → ``ThinkingDelta`` (then
``ThinkingEnd``); ``tool_call`` / ``tool_call_update`` → a timeline row (``ToolCallStart``,
``ToolCallArgs``, ``ToolCallEnd``; a ``diff`` content becomes a fenced diff among the row's
outputs); ``plan`` → a ``Plan`` step (the view's strategy-step card). Updates that only
concern the agent's own UI (commands, modes, session titles) are recorded, not shown.
"""

from __future__ import annotations

import difflib
import json
import time
from dataclasses import dataclass, field
from typing import Any

from ..agent.events import (
    EventBase,
    StrategyStepEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ToolCallArgs,
    ToolCallEnd,
    ToolCallStart,
)
from ..agent.results import ToolCallRecord

STEP = 1  # an outside agent's turn is one step of ours: its own model calls are not visible
PREVIEW_CHARS = 2000
_STATUS = {"completed": "ok", "failed": "error"}
_PLAN_MARKS = {"completed": "☑", "in_progress": "▸"}


@dataclass
class _Call:
    record: ToolCallRecord
    started: float
    arguments: Any = None
    diffs: list[str] = field(default_factory=list)
    content: list[Any] = field(default_factory=list)  # the last content that held a diff
    kind: str = ""  # read, edit, execute … (a permission request may leave it out)
    done: bool = False


@dataclass
class UpdateMapper:
    """Turns a stream of ACP ``session/update`` payloads (JSON, camelCase) into our events,
    keeping what the turn's ``TurnResult`` needs: the answer's text and the tool calls."""

    text: str = ""
    thinking: str = ""
    calls: dict[str, _Call] = field(default_factory=dict)
    plan: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    _thinking_open: bool = False
    _tools_since_text: bool = False  # text after tool calls starts a new paragraph

    def map(self, update: dict[str, Any]) -> list[EventBase]:
        kind = update.get("sessionUpdate")
        events: list[EventBase] = []
        if kind != "agent_thought_chunk" and self._thinking_open:
            self._thinking_open = False
            events.append(ThinkingEnd(step=STEP))
        if kind == "agent_message_chunk":
            text = _text_of(update.get("content"))
            if text:
                if self._tools_since_text and self.text:
                    text = "\n\n" + text
                self._tools_since_text = False
                self.text += text
                events.append(TextDelta(step=STEP, text=text))
        elif kind == "agent_thought_chunk":
            text = _text_of(update.get("content"))
            if text:
                self.thinking += text
                self._thinking_open = True
                events.append(ThinkingDelta(step=STEP, text=text))
        elif kind in ("tool_call", "tool_call_update"):
            self._tools_since_text = True
            events.extend(self._tool(update))
        elif kind == "plan":
            self.plan = [e for e in update.get("entries") or [] if isinstance(e, dict)]
            events.append(StrategyStepEvent(step=STEP, strategy="plan", data={
                "kind": "thought", "label": "Plan", "text": plan_text(self.plan)}))
        elif kind == "usage_update":
            self.usage = {k: v for k, v in update.items() if k != "sessionUpdate"}
        return events

    def _tool(self, update: dict[str, Any]) -> list[EventBase]:
        call_id = str(update.get("toolCallId") or "")
        if not call_id:
            return []
        events: list[EventBase] = []
        call = self.calls.get(call_id)
        if call is None:
            name = str(update.get("title") or update.get("kind") or "tool")
            call = _Call(ToolCallRecord(call_id=call_id, name=name, status="running"), time.monotonic())
            self.calls[call_id] = call
            events.append(ToolCallStart(step=STEP, call_id=call_id, name=name))
        call.kind = str(update.get("kind") or call.kind)
        raw = update.get("rawInput")
        if raw and raw != call.arguments:
            call.arguments = call.record.arguments = raw
            events.append(ToolCallArgs(step=STEP, call_id=call_id, name=call.record.name, arguments=raw))
        content = update.get("content")
        if isinstance(content, list):
            diffs = [d for d in map(diff_text, content) if d]
            if diffs:
                call.diffs = diffs
                call.content = content
        status = _STATUS.get(str(update.get("status") or ""))
        if status is not None and not call.done:
            call.done = True
            output = _content_text(content) or _raw_text(update.get("rawOutput"))
            call.record.status = status
            call.record.output = output
            call.record.duration_ms = (time.monotonic() - call.started) * 1000
            if status == "error":
                call.record.error = output[:PREVIEW_CHARS] or "the agent reported the call as failed"
            outputs = [{"mime_type": "text/markdown", "data": f"```diff\n{d}\n```", "role": "display"}
                       for d in call.diffs]
            events.append(ToolCallEnd(
                step=STEP, call_id=call_id, name=call.record.name, status=status,
                duration_ms=call.record.duration_ms, result_preview=output[:PREVIEW_CHARS],
                error=call.record.error, outputs=outputs))
        return events

    def unfinished(self) -> list[EventBase]:
        """Closing events for what the agent left open (a cancelled or failed turn)."""
        events: list[EventBase] = [ThinkingEnd(step=STEP)] if self._thinking_open else []
        self._thinking_open = False
        for call in self.calls.values():
            if not call.done:
                call.done = True
                call.record.status = "interrupted"
                events.append(ToolCallEnd(step=STEP, call_id=call.record.call_id, name=call.record.name,
                                          status="interrupted", error="the turn ended before the call finished"))
        return events

    def known(self, call_id: str) -> dict[str, Any]:
        """What the updates said of a call (kind, diff content): a permission request may omit it."""
        call = self.calls.get(call_id)
        return {"kind": call.kind, "content": call.content} if call is not None else {}

    def records(self) -> list[ToolCallRecord]:
        return [c.record for c in self.calls.values()]


def _text_of(content: Any) -> str:
    if isinstance(content, dict) and content.get("type") == "text":
        return str(content.get("text") or "")
    return ""


def _content_text(content: Any) -> str:
    """A tool call's ``content`` list as text (its ``content`` blocks; diffs are shown apart)."""
    if not isinstance(content, list):
        return ""
    parts = [_text_of(c.get("content")) for c in content if isinstance(c, dict) and c.get("type") == "content"]
    return "\n".join(p for p in parts if p)


def _raw_text(raw: Any) -> str:
    if raw is None:
        return ""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list) and all(isinstance(r, dict) and r.get("type") == "text" for r in raw):
        return "\n".join(str(r.get("text") or "") for r in raw)
    return json.dumps(raw, ensure_ascii=False, default=str)


def diff_text(block: Any) -> str:
    """A ``diff`` content block (path, oldText, newText) as a unified diff; '' otherwise."""
    if not isinstance(block, dict) or block.get("type") != "diff":
        return ""
    path = str(block.get("path") or "file")
    old, new = block.get("oldText"), str(block.get("newText") or "")
    lines = difflib.unified_diff((old or "").splitlines(), new.splitlines(),
                                 "/dev/null" if old is None else f"a/{path.lstrip('/')}", f"b/{path.lstrip('/')}",
                                 lineterm="")
    return "\n".join(lines)


def plan_text(entries: list[dict[str, Any]]) -> str:
    """A plan's entries as a checklist: ☑ done, ▸ in progress, ☐ pending."""
    return "\n".join(f"{_PLAN_MARKS.get(str(e.get('status')), '☐')} {e.get('content', '')}" for e in entries)
