"""What a session spent, read from the event log: every finished turn's ``TurnEnd``, from
every kernel that ran it (a restarted kernel keeps counting where the last one stopped),
plus the memory extractions made after its turns (``memory_extraction`` records)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..events import EventLog


@dataclass(frozen=True)
class SessionSpending:
    """A session's logged turns: their cost (turns without a price count 0 and are
    counted in ``unpriced``) and tokens (input with cache + output); ``last_*``: its
    latest turn's."""

    turns: int = 0
    cost_usd: float = 0.0
    tokens: int = 0
    unpriced: int = 0
    last_cost_usd: float | None = None
    last_tokens: int = 0


_QUERY = (
    "SELECT json_extract(data, '$.cost_usd'), COALESCE(json_extract(data, '$.input_tokens'), 0)"
    " + COALESCE(json_extract(data, '$.output_tokens'), 0) + COALESCE(json_extract(data, '$.cache_read_tokens'), 0)"
    " + COALESCE(json_extract(data, '$.cache_creation_tokens'), 0)"
    " FROM events WHERE session_id = ? AND type = 'turn_end' ORDER BY id"
)


_AFTER_TURNS = (  # model calls made after a turn ended (memory extraction): not in its TurnEnd
    "SELECT COALESCE(SUM(json_extract(data, '$.cost_usd')), 0) FROM records"
    " WHERE session_id = ? AND kind = 'memory_extraction'"
)


def session_spending(event_log: EventLog, session_id: str) -> SessionSpending:
    """The session's spending so far, as the log holds it (waits for pending writes)."""
    event_log.flush()
    db, lock = event_log.shared_connection()
    with lock:
        rows = db.execute(_QUERY, (session_id,)).fetchall()
        (after,) = db.execute(_AFTER_TURNS, (session_id,)).fetchone()
    return SessionSpending(
        turns=len(rows), cost_usd=sum(float(cost) for cost, _ in rows if cost is not None) + float(after or 0),
        tokens=sum(int(tokens or 0) for _, tokens in rows), unpriced=sum(cost is None for cost, _ in rows),
        last_cost_usd=(None if rows[-1][0] is None else float(rows[-1][0])) if rows else None,
        last_tokens=int(rows[-1][1] or 0) if rows else 0,
    )
