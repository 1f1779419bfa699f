"""``%agent inspect outside [--full]``: what coding agents did here through the MCP endpoint.

Outside agents (Claude Code, Codex … through ``jupyter_brain/server``) leave one
``outside_call`` record per tool call in the event log beside the notebook, the same log
the kernel's turns write (issue #35). ``%agent log`` lists the calls one line each; this
groups them by MCP session, as ``%agent inspect`` shows a turn: who, when, each call's
arguments (masked when recorded), what the gate decided and by whom, and the result's
summary. Plain text, so it works in every front-end.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from .text import clip

OUTSIDE_CALL = "outside_call"  # the record kind jupyter_brain/server/audit.py writes
ARGUMENT_PREVIEW_CHARS = 160  # each call's arguments, unless --full


@dataclass
class SessionCalls:
    """One MCP session's calls, oldest first."""

    session_id: str
    client: str
    calls: list[dict[str, Any]] = field(default_factory=list)

    def decisions(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for call in self.calls:
            how = decision_of(call)
            counts[how] = counts.get(how, 0) + 1
        return counts


def outside_records(event_log: Any) -> list[dict[str, Any]]:
    return list(event_log.records(OUTSIDE_CALL))


def group_sessions(records: list[dict[str, Any]]) -> list[SessionCalls]:
    """The records by MCP session, sessions in the order they began."""
    sessions: dict[str, SessionCalls] = {}
    for record in records:
        sid = str(record.get("mcp_session", "?"))
        session = sessions.setdefault(sid, SessionCalls(sid, str(record.get("client", "?"))))
        session.calls.append(record)
    return list(sessions.values())


def decision_of(call: dict[str, Any]) -> str:
    """What the gate said, and who decided when a person did: ``approved by alice``."""
    decision = call.get("decision") or {}
    how = str(decision.get("how", "")) or "?"
    who = decision.get("approved_by") or decision.get("denied_by")
    return f"{how} by {who}" if who else how


def render_outside(records: list[dict[str, Any]], *, full: bool = False) -> str:
    sessions = group_sessions(records)
    if not sessions:
        return "no outside agent has worked here (the MCP endpoint's calls on notebooks in this folder show here)"
    lines = [f"outside agents (MCP endpoint): {len(sessions)} session{'s' * (len(sessions) != 1)}, "
             f"{len(records)} call{'s' * (len(records) != 1)}"]
    for session in sessions:
        first, last = session.calls[0].get("ts", 0), session.calls[-1].get("ts", 0)
        tally = ", ".join(f"{n} {how}" for how, n in session.decisions().items())
        lines.append(f"\nsession {session.session_id[:6]} · {session.client} · {_clock(first)}–{_clock(last)}"
                     f" · {len(session.calls)} call{'s' * (len(session.calls) != 1)} ({tally})")
        for n, call in enumerate(session.calls, 1):
            lines.extend(_call_lines(n, call, full))
    return "\n".join(lines)


def outside_footer(records: list[dict[str, Any]]) -> str | None:
    """One line under a turn's request when outside agents worked here too."""
    if not records:
        return None
    sessions = len(group_sessions(records))
    return (f"\noutside agents worked here too: {len(records)} call{'s' * (len(records) != 1)} in {sessions} "
            f"MCP session{'s' * (sessions != 1)} (%agent inspect outside)")


def _call_lines(n: int, call: dict[str, Any], full: bool) -> list[str]:
    args = call.get("arguments") or {}
    target = str(args.get("path", ""))
    where = f" {target}" + (f" #{args['index']}" if "index" in args else "") if target else ""
    arguments = json.dumps(args, ensure_ascii=False)
    if not full:
        arguments = clip(arguments, ARGUMENT_PREVIEW_CHARS)
    return [
        f"  {n}. [{_clock(call.get('ts', 0))}] {call.get('tool', '?')}{where} · {decision_of(call)}"
        f" · {call.get('status', '?')} · {float(call.get('seconds') or 0):.2f} s",
        f"     arguments: {arguments}",
        f"     result: {call.get('summary', '')}",
    ]


def _clock(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ts or 0))
