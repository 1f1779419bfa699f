"""How a stop by the policy's daily caps reads: whose cap, what was spent (and by whom),
what the call needed, when the cap resets, and which file set it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from .ledger import CapReached, resets_at


def usd(value: float) -> str:
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def amount(value: float, unit: str) -> str:
    return usd(value) if unit == "usd" else f"{int(value):,} tokens"


def until(moment: datetime, now: datetime | None = None) -> str:
    left = max(0, int((moment - (now or datetime.now(UTC))).total_seconds()))
    hours, minutes = divmod(left // 60, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"


def cap_message(reached: CapReached, user: str, source: Path, now: datetime | None = None) -> str:
    scope = reached.scope
    whose = f"your daily cap (user '{user}')" if scope.kind == "user" else f"the daily cap of team '{scope.name}'"
    what = "cost" if reached.unit == "usd" else "token"
    by = ""
    if scope.kind == "team" and reached.by_member:
        by = " (" + ", ".join(f"{name} {amount(v, reached.unit)}" for name, v in
                              sorted(reached.by_member.items(), key=lambda kv: -kv[1]) if v) + ")"
    reset = resets_at(reached.day)
    return (f"Stopped before the next model call: {whose} of {amount(reached.cap, reached.unit)} "
            f"({what}) is reached. Spent today: {amount(reached.spent, reached.unit)}{by}; the call could "
            f"use up to {amount(reached.needed, reached.unit)}. The cap resets at {reset:%Y-%m-%d %H:%M} UTC "
            f"(in {until(reset, now)}). Set by the policy {source}.")


def unpriced_message(model: str, source: Path) -> str:
    return (f"Stopped before the next model call: {model} has no known price, so the daily cost caps of "
            f"the policy {source} cannot be checked.")


def ledger_down_message(problem: str) -> str:
    return (f"Stopped before the next model call: {problem}. The policy's spending caps are checked in the "
            "ledger before every call, so no call is made while it cannot be reached; try again once it is back.")
