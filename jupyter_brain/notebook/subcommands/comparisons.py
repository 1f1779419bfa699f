"""``%agent compare-history / compare-best``: past ``%%compare`` runs and their winners."""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from .text import clip, count_arg


def cmd_compare_history(magics: Any, rest: list[str]) -> None:
    from ...compare import comparison_history

    past = comparison_history(magics.manager.event_log)
    if not past:
        print("no comparisons yet (run a %%compare cell)")
    for i, c in enumerate(past, 1):
        verdict = {True: " pass", False: " FAIL", None: ""}  # with checks (#27)
        statuses = ", ".join(f"{r['strategy']}#{r['run']} {r['status']}{verdict[r.get('passed')]}"
                             for r in c.get("rows", []))
        print(f"{i}. {clip(c.get('prompt', ''), 60)}")
        print(f"   runs: {statuses}")
        print(f"   winner: {c['winner'] or '(not marked)'}")


def cmd_compare_best(magics: Any, rest: list[str]) -> None:
    """The "mark best" button's record, from code (scripts, headless runs)."""
    from ...compare import comparison_history, record_decision

    past = comparison_history(magics.manager.event_log)
    usage = "%agent compare-best STRATEGY [N]"
    if not rest or len(rest) > 2:
        raise UsageError(f"{usage}: give a strategy and optionally a comparison number")
    if not past:
        raise UsageError(f"{usage}: no comparisons yet (run a %%compare cell)")
    number = count_arg(rest[1:], "compare-best", default=len(past))
    if number > len(past):
        raise UsageError(f"{usage}: no comparison {number}; use 1-{len(past)}")
    chosen = past[number - 1]
    strategy = rest[0].lower()
    if strategy not in chosen["strategies"]:
        raise UsageError(f"{usage}: comparison {number} ran {', '.join(chosen['strategies'])}, not {strategy!r}")
    record_decision(magics.manager.event_log, chosen["comparison_id"], strategy, source="magic")
    print(f"comparison {number} ({clip(chosen['prompt'], 40)}): winner {strategy}")
