"""``%agent inspect [TURN] [--full]``: the last request a turn sent, part by part;
``%agent inspect outside [--full]``: what outside agents did here (``outside_sessions``).

Works in every front-end (plain text). Each part — the system prompt, the fresh layers
(workspace, memories, context pack, runtime, skill), the history and each tool schema —
with its token count (the session's counter, calibrated to the provider's counts). The
snapshot is built from the request the turn kept, with every string masked.
"""

from __future__ import annotations

import json
from typing import Any

from IPython.core.error import UsageError

from ...agent.request_snapshot import REQUEST_RECORD, RequestSnapshot, snapshot_from_record
from .outside_sessions import outside_footer, outside_records, render_outside
from .text import clip

PART_TITLES = {
    "system": "System prompt",
    "workspace": "Workspace (rendered for this request)",
    "memory": "Memories recalled",
    "context_pack": "Context pack (workspace passages)",
    "runtime": "Runtime metadata",
    "skill": "Skill",
    "hook": "Added by a hook",
    "agents_md": "AGENTS.md (project instructions)",
    "skills": "Agent Skills (names and descriptions)",
    "history": "History",
}
PREVIEW_CHARS = 240  # each history message, unless --full


def cmd_inspect(magics: Any, rest: list[str]) -> None:
    full = "--full" in rest
    words = [w for w in rest if w != "--full"]
    unknown = [w for w in words if w.startswith("-")]
    if unknown or len(words) > 1:
        raise UsageError("%agent inspect [TURN|outside] [--full]: TURN is a turn number (1 = first) or a turn id;"
                         " outside: what coding agents did here through the MCP endpoint")
    outside = outside_records(magics.manager.event_log)
    if words == ["outside"]:
        print(render_outside(outside, full=full))
        return
    session = magics.manager.current
    if not session.turns():
        if not words and outside:  # only outside agents have worked here: show theirs
            print(render_outside(outside, full=full))
            return
        raise UsageError(f"%agent inspect: session {session.name} has no turns yet")
    record, snapshot = turn_snapshot(session, words[0] if words else None)
    if snapshot is None:
        print(f"turn {record.index + 1} ({record.turn_id}): {NOT_KEPT}")
    else:
        print(render_snapshot(snapshot, full=full))
    footer = outside_footer(outside)
    if footer:
        print(footer)


NOT_KEPT = "its request was not stored (it sent none, or it ran before requests were stored)"


def turn_snapshot(session: Any, key: str | None = None) -> tuple[Any, RequestSnapshot | None]:
    """(the turn's record, its request snapshot or None): the last turn, or turn ``key``
    (a number, 1 = first, or a turn id). The session must have turns."""
    record = _pick_turn(session.turns(), key)
    result = next((r for r in reversed(session.results) if r.turn_id == record.turn_id), None)
    if result is not None:
        return record, result.request_snapshot()
    return record, stored_snapshot(session.event_log, session.name, record.turn_id)  # an earlier kernel's turn


def stored_snapshot(event_log: Any, session_id: str, turn_id: str) -> RequestSnapshot | None:
    """The request a turn stored when it ended (``agent/integrations/request_log``)."""
    db, lock = event_log.shared_connection()
    with lock:
        row = db.execute("SELECT data FROM records WHERE kind = ? AND session_id = ?"
                         " AND json_extract(data, '$.turn_id') = ? ORDER BY id DESC LIMIT 1",
                         (REQUEST_RECORD, session_id, turn_id)).fetchone()
    return None if row is None else snapshot_from_record(json.loads(row[0]))


def _pick_turn(turns: list[Any], key: str | None) -> Any:
    if key is None:
        return turns[-1]
    if key.lstrip("-").isdigit():
        n = int(key)
        if 1 <= n <= len(turns):
            return turns[n - 1]
        if -len(turns) <= n <= -1:
            return turns[n]
    match = next((t for t in turns if t.turn_id == key), None)
    if match is None:
        raise UsageError(f"%agent inspect: no turn {key!r}; use 1-{len(turns)} or a turn id")
    return match


def render_snapshot(snap: RequestSnapshot, *, full: bool = False) -> str:
    """The snapshot as text: a summary table of parts, then each part's content."""
    lines = [f"Request of turn {snap.turn_id} (step {snap.step}) to {snap.provider or '?'}:{snap.model or '?'}",
             f"total ≈ {snap.total_tokens:,} tokens (counts calibrated ×{snap.calibration:.2f})", ""]
    rows = [(PART_TITLES.get(p.kind, p.kind), p.tokens, f"{len(p.messages)} message(s)") for p in snap.parts]
    rows.append(("Tools", sum(t.tokens for t in snap.tools), f"{len(snap.tools)} schema(s)"))
    width = max(len(r[0]) for r in rows)
    lines += [f"  {name:<{width}}  {tokens:>8,} tokens  {what}" for name, tokens, what in rows]
    for part in snap.parts:
        lines += ["", f"── {PART_TITLES.get(part.kind, part.kind)} · {part.tokens:,} tokens ──"]
        if part.kind == "history":
            lines += [_history_line(i, m, full) for i, m in enumerate(part.messages, 1)]
        else:
            lines += [str(m.get("content", "")) for m in part.messages]
    lines += ["", f"── Tools · {len(snap.tools)} ──"]
    lines += [f"  {t.name}  ({t.tokens:,} tokens)" for t in snap.tools]
    if full:
        lines += ["", *(json.dumps(t.schema_, indent=2) for t in snap.tools)]
    return "\n".join(lines)


def _history_line(i: int, message: dict[str, Any], full: bool) -> str:
    role = message.get("role", "?")
    content = message.get("content") or ""
    text = str(content) if full else clip(content, PREVIEW_CHARS)
    calls = message.get("tool_calls") or []
    extra = "".join(f"\n      → {c.get('name')}({clip(json.dumps(c.get('arguments'), default=str), 120)})"
                    for c in calls)
    return f"  {i:>3}. {role}: {text}{extra}"
