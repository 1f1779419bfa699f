"""What a comparison's header says beside its title, and how a check's outcome reads.

Shared by the widget's Markdown fallback (``compare_view.py``) and the text view
(``compare_text.py``), so nbconvert, VS Code and terminals say the same as the widget.
"""

from __future__ import annotations

from typing import Any


def header_notes(result: Any) -> list[str]:
    """``--max-cost`` stopping the comparison early, a run changing the user's variables."""
    notes = []
    if getattr(result, "stopped_by_budget", False):
        cap = getattr(result, "max_cost", None)
        stopped = sum(r["status"] == "budget" for r in result.rows)
        unjudged = sum("would cross the comparison" in str(r.get("reason") or "") for r in result.rows)
        cap_text = f"the ${cap:g} cap" if cap else "the budget cap"
        what = [f"{stopped} run(s) stopped before the end"] if stopped else []
        what += [f"{unjudged} answer(s) not judged"] if unjudged else []
        notes.append(f"stopped early: {cap_text} (--max-cost) was reached; {', '.join(what)}")
    changes = getattr(result, "namespace_changes", None)
    if changes:
        notes.append("your variables changed during the comparison (namespace not intact): " + ", ".join(changes))
    return notes


def verdict_text(row: dict[str, Any]) -> str:
    """``pass``, ``FAIL: reason`` or ``""`` (no checks) for one run."""
    passed = row.get("passed")
    if passed is None:
        return ""
    judged = any(v.get("opinion") for v in row.get("verdicts") or [])
    text = "pass" if passed else f"FAIL: {row.get('reason') or 'a check failed'}"
    return f"{text} (judged by a model: its opinion)" if judged else text


def rate_text(entry: dict[str, Any]) -> str:
    """A strategy's success: ``3/5 · 60 % (23–88 %)``; ``""`` without checks."""
    if entry.get("checked") is None:
        return ""
    passed, n = entry["passed"], entry["checked"]
    if n == 1:
        return "pass" if passed else "fail"
    return f"{passed}/{n} · {100 * passed / n:.0f} % ({100 * entry['low']:.0f}–{100 * entry['high']:.0f} %)"


def spread_text(mean: float | None, sd: float | None, digits: int) -> str:
    """``2`` when the runs agree, ``2.5 ± 0.7`` when they differ, ``–`` when unknown."""
    if mean is None:
        return "–"
    text = _number(mean, digits)
    if sd is None or round(sd, digits if digits else 1) == 0:
        return text
    return f"{text} ± {_number(sd, digits or 1)}"


def _number(value: float, digits: int) -> str:
    if digits:
        return f"{value:.{digits}f}"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
