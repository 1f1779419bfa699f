"""Building decision records: one per finished turn, one per ``%%compare`` "Mark best".

Kept apart from the store so any ``RuntimeDecisionStore`` gets the same fields, and the
harness only has to call ``decision_record(turn, result, harness)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..redact import Redactor
from .base import RuntimeDecisionRecord

if TYPE_CHECKING:
    from ..harness import AgentHarness
    from ..results import TurnResult
    from ..turn import Turn


def decision_record(turn: Turn, result: TurnResult, harness: AgentHarness) -> RuntimeDecisionRecord:
    """What the harness chose for ``turn`` and what came of it."""
    provider = harness.provider
    strategy = harness.strategy
    used = _unique(c.name for c in result.tool_calls)
    failed = _unique(c.name for c in result.tool_calls if c.status != "ok")
    detail: dict[str, Any] = {"tool_calls": len(result.tool_calls)}
    if failed:
        detail["tools_failed"] = failed
    if result.reflections:
        detail["reflections"] = len(result.reflections)
    if len(set(result.providers_used)) > 1:
        detail["providers_used"] = list(result.providers_used)
    return RuntimeDecisionRecord(
        session_id=result.session_id, turn_id=result.turn_id, kind="turn",
        provider=str(getattr(provider, "name", "") or ""), model=str(getattr(provider, "model", "") or ""),
        strategy=strategy.name if strategy is not None else None, think_level=harness.think_level.value,
        tools_offered=[str(s.get("name", "")) for s in turn.tool_schemas], tools_used=used,
        steps=len(result.steps), status=result.status,
        stop_reason=stop_reason(result, max_steps=harness.max_steps, timeout_s=harness.timeout_s,
                                redact=harness.redactor),
        input_tokens=result.input_tokens, output_tokens=result.output_tokens, cost_usd=result.cost_usd,
        duration_s=result.duration_s, prompt=turn.provenance.as_dict(),
        run_context=dict(harness.run_context_metadata), detail=detail,
    )


def stop_reason(result: TurnResult, *, max_steps: int, timeout_s: float, redact: Any = None) -> str:
    """Why the turn stopped, in words (an error's text masked like the log's)."""
    status = result.status
    if status == "completed":
        calls = len(result.tool_calls)
        return "answered" + (f" after {calls} tool call{'s' if calls != 1 else ''}" if calls else "")
    if status == "max_steps":
        return f"reached the step limit ({max_steps} steps) before an answer"
    if status == "timeout":
        return f"reached the time limit ({timeout_s:g}s) before an answer"
    if status == "strategy_limit":
        return "the reasoning strategy reached its own limit"
    if status == "interrupted":
        return "interrupted by the user"
    if status == "refused":
        return "the model declined to answer"
    message = " ".join((result.error or "unknown error").split())[:300]
    return "error: " + (redact or Redactor())(message)


def compare_best_record(comparison: Mapping[str, Any], winner: str, *, run: int = 1,
                        source: str = "user") -> RuntimeDecisionRecord:
    """A ``%%compare`` "Mark best": the compared strategies, their runs and the winner.

    ``comparison`` is the comparison's record (``comparison_id``, ``prompt``,
    ``strategies``, ``rows``); the winner's row gives the record's figures.
    """
    comparison_id = str(comparison.get("comparison_id", ""))
    rows = list(comparison.get("rows") or [])
    best: Mapping[str, Any] = next((r for r in rows if r.get("strategy") == winner and r.get("run", 1) == run), {})
    return RuntimeDecisionRecord(
        session_id=f"compare-{comparison_id}", turn_id=comparison_id, kind="compare_best",
        strategy=winner, status=str(best.get("status", "")), stop_reason=f"marked best by {source}",
        steps=int(best.get("steps") or 0), input_tokens=int(best.get("input_tokens") or 0),
        output_tokens=int(best.get("output_tokens") or 0), cost_usd=best.get("cost_usd"),
        duration_s=float(best.get("wall_s") or 0.0),
        detail={
            "comparison_id": comparison_id, "prompt": comparison.get("prompt", ""),
            "strategies": list(comparison.get("strategies") or []), "runs": comparison.get("runs", 1),
            "winner": winner, "run": run, "source": source,
            "compared": [{k: r.get(k) for k in ("strategy", "run", "status", "steps", "cost_usd", "wall_s")}
                         for r in rows],
        },
    )


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))
