"""``%agent status / context``: the current session, its settings and its context use."""

from __future__ import annotations

from typing import Any


def cmd_status(magics: Any, rest: list[str]) -> None:
    session = magics.manager.current
    summary = session.cost_tracker.summary()
    print(f"session: {session.name}")
    print(f"turns: {len(session.turns())}    messages in history: {len(session.history)}")
    print("defaults: " + "  ".join(f"{k}={v}" for k, v in magics.defaults().items()))
    print(f"tokens this kernel: in {summary['input_tokens']:,}  out {summary['output_tokens']:,}  "
          f"cache read {summary['cache_read_tokens']:,}  cache write {summary['cache_creation_tokens']:,}")
    for line in context_lines(magics, session):
        print(line)
    print(f"event log: {magics.manager.event_log.path}")


def cmd_context(magics: Any, rest: list[str]) -> None:
    from ..conventions import cell_conventions

    for line in [*context_lines(magics, magics.manager.current), *cell_conventions(magics).context_lines()]:
        print(line)


def context_lines(magics: Any, session: Any) -> list[str]:
    """Context usage against the window: the last request, and the history as it is now."""
    from ...agent.context import TokenCounter, context_window_for

    harness = session.last_harness
    history_tokens = TokenCounter().count_messages(session.history)
    if harness is None:
        budget = magics.context_budget or context_window_for(magics.model)
        return [f"context: no request yet in this kernel; history ≈ {history_tokens:,} tokens "
                f"of a {budget:,}-token budget"]
    ctx = harness.context
    window = (f" (model window {harness.context_window:,})"
              if harness.context_window != harness.context_budget else "")
    compact = (f"compacts ({harness.compaction.name}) at {ctx.critical_tokens:,}"
               if harness.auto_compact else "auto-compaction off")
    return [
        f"context: last request {ctx.last_tokens:,} tokens = {ctx.ratio:.0%} of the "
        f"{harness.context_budget:,}-token budget{window} · level {ctx.level}",
        f"  warning at {ctx.warning_tokens:,} · {compact} · {harness.compactions} compaction"
        f"{'s' * (harness.compactions != 1)} in the last turn",
        f"  history now: {len(session.history)} messages ≈ {history_tokens:,} tokens",
    ]
