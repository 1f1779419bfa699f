"""Building decision records: one per finished turn, one per ``%%compare`` "Mark best".

Kept apart from the store so any ``RuntimeDecisionStore`` gets the same fields, and
the decisions integration only has to call ``decision_record(result, ...)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..redact import Redactor
from .base import RuntimeDecisionRecord

if TYPE_CHECKING:
    from ..results import TurnResult


def decision_record(result: TurnResult, *, provider: str, model: str, strategy: str | None, think_level: str,
                    tools_offered: Sequence[str], prompt: dict[str, Any], run_context: dict[str, Any],
                    max_steps: int, timeout_s: float, redact: Callable[[str], str] | None = None,
                    ) -> RuntimeDecisionRecord:
    """What the harness chose for a turn (the keywords) and what came of it (``result``)."""
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
        session_id=result.session_id, turn_id=result.turn_id, kind="turn", provider=provider, model=model,
        strategy=strategy, think_level=think_level, tools_offered=list(tools_offered), tools_used=used,
        steps=len(result.steps), status=result.status,
        stop_reason=stop_reason(result, max_steps=max_steps, timeout_s=timeout_s, redact=redact),
        input_tokens=result.input_tokens, output_tokens=result.output_tokens, cost_usd=result.cost_usd,
        duration_s=result.duration_s, prompt=prompt, run_context=run_context, detail=detail,
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
    if status == "budget":
        return "stopped before a model call that could cross a budget cap"
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
