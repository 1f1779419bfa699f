"""Spending per user and team per UTC day, shared by every kernel that uses the ledger.

Before a model call, ``reserve`` checks the call's most (the budget caps' estimate)
against the user's and each of their teams' daily caps and records it, in one
transaction no other kernel interleaves with; after the call, ``settle`` replaces the
reservation with what the call really used. So kernels spending at once can never commit
more than a cap together: a cap is crossed only by a call that used more than its
estimate said it could. A settlement that cannot be written waits and is written before
the next reservation (the reservation, an upper bound, counts meanwhile).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from .ledger_sql import LedgerUnavailable, PostgresBackend, backend_for, now

if TYPE_CHECKING:
    from .policy import DailyCaps


@dataclass(frozen=True)
class Scope:
    """A capped spender: one user, or a team (its members spend together)."""

    kind: str  # "user" or "team"
    name: str
    members: tuple[str, ...]
    caps: DailyCaps

    @property
    def lock_key(self) -> str:
        return f"jupyter_brain:{self.kind}:{self.name}"


@dataclass(frozen=True)
class CapReached:
    """Why a call was refused: whose cap, what was spent, the cap, what the call needed."""

    scope: Scope
    unit: str  # "usd" or "tokens"
    spent: float
    cap: float
    needed: float
    day: str
    by_member: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Spending:
    cost_usd: float
    tokens: int


def today(at: datetime | None = None) -> str:
    return (at or datetime.now(UTC)).strftime("%Y-%m-%d")


def resets_at(day: str) -> datetime:
    """When a day's caps start again: the next midnight, UTC."""
    return datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC) + timedelta(days=1)


class Ledger:
    """One kernel's handle on the shared ledger (``url``: ``sqlite:///…`` or ``postgresql://…``)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.backend = backend_for(url)
        self._mark = self.backend.placeholder
        self._pending: list[tuple[int, float, int]] = []  # settlements not written yet
        self._lock = threading.Lock()

    def reserve(self, user: str, scopes: Sequence[Scope], cost_usd: float, tokens: int,
                *, turn_id: str = "", day: str | None = None) -> int | CapReached:
        """Record the call's most under ``user``; or what cap it would cross (nothing recorded)."""
        day = day or today()
        if isinstance(self.backend, PostgresBackend) and not self._pending:
            return self._reserve_in_one_statement(user, scopes, cost_usd, tokens, turn_id, day)
        m = self._mark
        outcome: int | CapReached
        with self._lock:
            with self.backend.transaction([s.lock_key for s in scopes]) as run:
                written = self._write_pending(run)
                outcome = self._first_crossing(run, scopes, cost_usd, tokens, day) or int(run(
                    f"INSERT INTO jupyter_brain_spending (day, user_name, cost_usd, tokens, settled, created_at, "
                    f"turn_id) VALUES ({m}, {m}, {m}, {m}, 0, {m}, {m}) RETURNING id",
                    (day, user, float(cost_usd), int(tokens), now(), turn_id))[0][0])
            del self._pending[:written]  # committed
        return outcome

    def settle(self, reservation: int, cost_usd: float, tokens: int) -> None:
        """The call's real use replaces its reservation (kept for later if the ledger is down)."""
        with self._lock:
            self._pending.append((reservation, float(cost_usd), int(tokens)))
            if isinstance(self.backend, PostgresBackend) and len(self._pending) == 1:
                try:  # one statement, one round trip
                    self.backend.call("UPDATE jupyter_brain_spending SET cost_usd = %s, tokens = %s, settled = 1 "
                                      "WHERE id = %s", (float(cost_usd), int(tokens), reservation))
                    self._pending.clear()
                except LedgerUnavailable:
                    pass  # written before the next reservation; the reservation counts meanwhile
                return
            try:
                with self.backend.transaction() as run:
                    written = self._write_pending(run)
                del self._pending[:written]
            except LedgerUnavailable:
                pass  # written before the next reservation; the reservation counts meanwhile

    def _reserve_in_one_statement(self, user: str, scopes: Sequence[Scope], cost_usd: float, tokens: int,
                                  turn_id: str, day: str) -> int | CapReached:
        """PostgreSQL's ``jupyter_brain_reserve``: one round trip; the sums by member are read
        only when a cap would be crossed (for the message)."""
        assert isinstance(self.backend, PostgresBackend)
        members = [(i + 1, u) for i, scope in enumerate(scopes) for u in scope.members]
        with self._lock:
            rows = self.backend.call(
                "SELECT * FROM jupyter_brain_reserve(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (day, user, float(cost_usd), int(tokens), turn_id, now(), [s.lock_key for s in scopes],
                 [i for i, _ in members], [u for _, u in members],
                 [s.caps.max_cost_per_day for s in scopes], [s.caps.max_tokens_per_day for s in scopes]))
        reservation, crossed, unit, spent = rows[0]
        if reservation is not None:
            return int(reservation)
        scope = scopes[int(crossed) - 1]
        by = self.spending(list(scope.members), day)
        by_member = {u: (s.cost_usd if unit == "usd" else float(s.tokens)) for u, s in by.items()}
        cap = scope.caps.max_cost_per_day if unit == "usd" else scope.caps.max_tokens_per_day
        return CapReached(scope, str(unit), float(spent), float(cap or 0), cost_usd if unit == "usd" else tokens,
                          day, {u: v for u, v in by_member.items() if v})

    def spending(self, users: Sequence[str], day: str | None = None) -> dict[str, Spending]:
        """Each user's spending of the day (settled, and reservations at their most)."""
        day = day or today()
        m = self._mark
        marks = ", ".join([m] * len(users))
        with self._lock, self.backend.transaction() as run:
            rows = run(f"SELECT user_name, COALESCE(SUM(cost_usd), 0), COALESCE(SUM(tokens), 0) FROM "
                       f"jupyter_brain_spending WHERE day = {m} AND user_name IN ({marks}) GROUP BY user_name",
                       (day, *users)) if users else []
        found = {str(u): Spending(float(c), int(t)) for u, c, t in rows}
        return {u: found.get(u, Spending(0.0, 0)) for u in users}

    def close(self) -> None:
        self.backend.close()

    # inside a transaction --------------------------------------------------------------
    def _first_crossing(self, run: object, scopes: Sequence[Scope], cost_usd: float, tokens: int,
                        day: str) -> CapReached | None:
        """One read of every member's spending of the day, then each scope's sums."""
        if not scopes:
            return None
        users = sorted({u for scope in scopes for u in scope.members})
        m = self._mark
        marks = ", ".join([m] * len(users))
        rows = run(f"SELECT user_name, COALESCE(SUM(cost_usd), 0), COALESCE(SUM(tokens), 0) FROM "  # type: ignore[operator]
                   f"jupyter_brain_spending WHERE day = {m} AND user_name IN ({marks}) GROUP BY user_name",
                   (day, *users))
        spent = {str(u): (float(c), int(t)) for u, c, t in rows}
        for scope in scopes:
            reached = self._crossing(scope, spent, cost_usd, tokens, day)
            if reached is not None:
                return reached
        return None

    @staticmethod
    def _crossing(scope: Scope, spent: dict[str, tuple[float, int]], cost_usd: float, tokens: int,
                  day: str) -> CapReached | None:
        caps = scope.caps
        rows = [(u, *spent[u]) for u in scope.members if u in spent]
        by_cost = {u: c for u, c, _ in rows}
        spent_cost = sum(by_cost.values())
        spent_tokens = sum(t for _, _, t in rows)
        if caps.max_cost_per_day is not None and spent_cost + cost_usd > caps.max_cost_per_day:
            return CapReached(scope, "usd", spent_cost, caps.max_cost_per_day, cost_usd, day, by_cost)
        if caps.max_tokens_per_day is not None and spent_tokens + tokens > caps.max_tokens_per_day:
            by_tokens = {str(u): float(t) for u, _, t in rows}
            return CapReached(scope, "tokens", spent_tokens, caps.max_tokens_per_day, tokens, day, by_tokens)
        return None

    def _write_pending(self, run: object) -> int:
        """Write the waiting settlements; how many (they leave the list once committed)."""
        m = self._mark
        for reservation, cost, tokens in self._pending:
            run(f"UPDATE jupyter_brain_spending SET cost_usd = {m}, tokens = {m}, settled = 1 WHERE id = {m}",  # type: ignore[operator]
                (cost, tokens, reservation))
        return len(self._pending)
