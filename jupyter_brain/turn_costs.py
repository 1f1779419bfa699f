"""What each turn of a session cost, kept in the event log so the figures outlive the kernel.

The kernel's ``SessionCostTracker`` knows a turn's whole cost (its model calls, the
thinking phase, memory extraction after the turn); when the turn is over, that figure is
stored as a ``turn_cost`` record beside the log. ``%agent cost`` reads these records, so a
restarted kernel still shows the turns of earlier kernels. Turns logged before records
existed fall back to their ``TurnEnd`` event's totals.
"""

from __future__ import annotations

import json
from typing import Any

from .agent.cost import TurnCost
from .providers.base import Usage

RECORD = "turn_cost"
# A replayed turn spent nothing now: where its figures are shown (the view's footer, the
# transcript, %agent cost) they are what it cost when recorded, after this mark
# (notebooks/nbval_sanitize.cfg removes it, so a replayed and a live run compare equal).
RECORDED_MARK = "replayed · recorded: "
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")


def record_turn_cost(event_log: Any, session_id: str, cost: TurnCost | None) -> None:
    """Store one finished turn's cost (nothing when the turn made no model call)."""
    if cost is None:
        return
    event_log.add_record(RECORD, {
        "turn_id": cost.turn_id, "model": cost.model, "usage": _usage_json(cost.usage),
        "cost_usd": cost.cost_usd, "thinking_phase_usage": _usage_json(cost.thinking_phase_usage),
        "thinking_phase_calls": cost.thinking_phase_calls, "thinking_phase_cost_usd": cost.thinking_phase_cost_usd,
    }, session_id=session_id)


def logged_turn_costs(event_log: Any, session_id: str) -> list[tuple[Any, TurnCost]]:
    """(the turn's ``TurnRecord``, its cost) for every logged turn of the session, oldest
    first, from every kernel; turns that made no model call are left out."""
    turns = event_log.turns(session_id)
    db, lock = event_log.shared_connection()
    with lock:
        records = db.execute("SELECT data FROM records WHERE kind = ? AND session_id = ? ORDER BY id",
                             (RECORD, session_id)).fetchall()
        ends = db.execute("SELECT turn_id, data FROM events WHERE session_id = ? AND type IN ('turn_start', 'turn_end')"
                          " ORDER BY id", (session_id,)).fetchall()
    stored = {c.turn_id: c for c in (_cost_of_record(json.loads(r[0])) for r in records)}
    from_events = _costs_of_events(ends)
    out = []
    for turn in turns:
        cost = stored.get(turn.turn_id) or from_events.get(turn.turn_id)
        if cost is not None:
            out.append((turn, cost))
    return out


def _usage_json(usage: Usage) -> dict[str, Any]:
    return {**usage.model_dump(), "estimated": usage.estimated}


def _usage(data: dict[str, Any] | None) -> Usage:
    data = data or {}
    return Usage(**{k: int(data.get(k) or 0) for k in _USAGE_KEYS}, estimated=bool(data.get("estimated")))


def _cost_of_record(data: dict[str, Any]) -> TurnCost:
    return TurnCost(
        turn_id=str(data.get("turn_id", "")), model=data.get("model"), usage=_usage(data.get("usage")),
        cost_usd=data.get("cost_usd"), thinking_phase_usage=_usage(data.get("thinking_phase_usage")),
        thinking_phase_calls=int(data.get("thinking_phase_calls") or 0),
        thinking_phase_cost_usd=data.get("thinking_phase_cost_usd"),
    )


def _costs_of_events(rows: list[tuple[str, str]]) -> dict[str, TurnCost]:
    """Older logs: a turn's totals from its ``TurnEnd`` (the model from its ``TurnStart``)."""
    models: dict[str, str | None] = {}
    out: dict[str, TurnCost] = {}
    for turn_id, raw in rows:
        data = json.loads(raw)
        if data.get("type") == "turn_start":
            models[turn_id] = data.get("model") or None
        elif data.get("steps"):
            usage = _usage({**data, "estimated": data.get("usage_estimated")})
            out[turn_id] = TurnCost(turn_id=turn_id, model=models.get(turn_id), usage=usage,
                                    cost_usd=data.get("cost_usd"))
    return out


def recorded_usages(event_log: Any, session_id: str) -> dict[str, dict[str, Any] | None]:
    """turn id -> what its replayed calls cost when they were recorded (``TurnEnd.recorded``;
    None for a turn that replayed nothing), for every ended turn of the session, oldest first."""
    event_log.flush()
    db, lock = event_log.shared_connection()
    with lock:
        rows = db.execute("SELECT turn_id, json_extract(data, '$.recorded') FROM events"
                          " WHERE session_id = ? AND type = 'turn_end' ORDER BY id", (session_id,)).fetchall()
    return {turn_id: (json.loads(raw) if raw else None) for turn_id, raw in rows}
