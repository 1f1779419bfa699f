"""What each ``%%compare`` cost, charged to the session it ran from, for ``%agent cost`` (#27).

A comparison's runs are turns of their own throw-away sessions, and its judge's calls are
no turn at all, so neither appears among the session's turns. When a comparison ends, its
runs' cost and its judge's (calls, tokens, cost; a recorded verdict reused on replay costs
nothing) are stored as a ``comparison_cost`` record of the session that ran the cell, so
``%agent cost`` lists them, in every later kernel too, and counts them in the total.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

RECORD = "comparison_cost"


@dataclass(frozen=True)
class ComparisonCost:
    comparison_id: str
    runs: int
    runs_cost_usd: float | None
    judge_calls: int
    judge_tokens: int
    judge_cost_usd: float | None

    @property
    def total_usd(self) -> float | None:
        if self.runs_cost_usd is None or self.judge_cost_usd is None:
            return None
        return self.runs_cost_usd + self.judge_cost_usd


def _sum(values: Sequence[float | None]) -> float | None:
    return None if any(v is None for v in values) else sum(v or 0.0 for v in values)


def comparison_cost(comparison_id: str, rows: Sequence[dict[str, Any]]) -> ComparisonCost:
    """A finished comparison's cost from its rows (``CompareResult.rows``)."""
    asked = [v for r in rows for v in r.get("verdicts") or []
             if v.get("opinion") and not v.get("recorded") and (v.get("input_tokens") or v.get("output_tokens"))]
    return ComparisonCost(
        comparison_id=comparison_id, runs=len(rows),
        # spent now (a replayed run's row shows what it cost when recorded, and spent 0)
        runs_cost_usd=_sum([r["spent_usd"] if "spent_usd" in r else r.get("cost_usd") for r in rows]),
        judge_calls=len(asked),
        judge_tokens=sum(int(v.get("input_tokens") or 0) + int(v.get("output_tokens") or 0) for v in asked),
        judge_cost_usd=_sum([v.get("cost_usd") for v in asked]),
    )


def record_comparison_cost(event_log: Any, session_id: str, result: Any) -> ComparisonCost:
    """Store a finished comparison's cost as a record of ``session_id``."""
    cost = comparison_cost(result.comparison_id, result.rows)
    event_log.add_record(RECORD, {
        "comparison_id": cost.comparison_id, "runs": cost.runs, "runs_cost_usd": cost.runs_cost_usd,
        "judge_calls": cost.judge_calls, "judge_tokens": cost.judge_tokens, "judge_cost_usd": cost.judge_cost_usd,
    }, session_id=session_id)
    return cost


def logged_comparison_costs(event_log: Any, session_id: str) -> list[ComparisonCost]:
    """The session's comparisons, oldest first, from every kernel."""
    db, lock = event_log.shared_connection()
    with lock:
        rows = db.execute("SELECT data FROM records WHERE kind = ? AND session_id = ? ORDER BY id",
                          (RECORD, session_id)).fetchall()
    out = []
    for (raw,) in rows:
        data = json.loads(raw)
        out.append(ComparisonCost(
            comparison_id=str(data.get("comparison_id", "")), runs=int(data.get("runs") or 0),
            runs_cost_usd=data.get("runs_cost_usd"), judge_calls=int(data.get("judge_calls") or 0),
            judge_tokens=int(data.get("judge_tokens") or 0), judge_cost_usd=data.get("judge_cost_usd")))
    return out


def with_comparisons(total: float | None, costs: Sequence[ComparisonCost]) -> float | None:
    """The session's turns' total plus its comparisons' (None: some price unknown)."""
    extra = _sum([c.total_usd for c in costs])
    return None if total is None or extra is None else total + extra


def _usd(value: float | None) -> str:
    return "price unknown" if value is None else f"${value:.4f}"


def comparison_lines(costs: Sequence[ComparisonCost]) -> list[str]:
    """One line per comparison, for ``%agent cost``."""
    lines = []
    for c in costs:
        judge = (f"; judge {c.judge_calls} call{'s' if c.judge_calls != 1 else ''}, {c.judge_tokens:,} tokens "
                 f"{_usd(c.judge_cost_usd)}") if c.judge_calls else ""
        lines.append(f"compare {c.comparison_id}: {c.runs} run{'s' if c.runs != 1 else ''} "
                     f"{_usd(c.runs_cost_usd)}{judge}  (total {_usd(c.total_usd)})")
    return lines


__all__ = ["ComparisonCost", "comparison_cost", "comparison_lines", "logged_comparison_costs",
           "record_comparison_cost", "with_comparisons"]
