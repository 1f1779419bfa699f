"""``%agent cost / log / replay``: what past turns cost, logged and looked like."""

from __future__ import annotations

import time
from typing import Any

from IPython.core.error import UsageError

from ...agent.cost import SessionCostTracker
from ...comparison_costs import comparison_lines, logged_comparison_costs, with_comparisons
from ...providers.base import Usage
from ...turn_costs import RECORDED_MARK, logged_turn_costs, recorded_usages
from ..budget import budget_lines
from ..turn_numbers import numbered_events
from ..views import agent_view, close_view
from .outside_sessions import OUTSIDE_CALL
from .text import clip, count_arg


def cmd_cost(magics: Any, rest: list[str]) -> None:
    """Every turn of the session, from the event log: earlier kernels' turns too.

    A replayed turn spent nothing: the total counts it as $0, and its line shows what it cost
    when it was recorded, after ``replayed · recorded:``. ``--team``: the user's teams'
    spending today, from the policy's shared ledger."""
    if "--team" in rest:
        from ..governance import kernel_governance

        print(kernel_governance(magics).team_report())
        return
    session = magics.manager.current
    logged = logged_turn_costs(magics.manager.event_log, session.name)
    comparisons = logged_comparison_costs(magics.manager.event_log, session.name)  # %%compare: runs + judge (#27)
    if not logged and not comparisons:
        print(f"session {session.name}: no turns yet")
        print(*budget_lines(magics, session.name), sep="\n")  # spent in every kernel, against the caps
        return
    replaced = session.cells.table.replaced(session.name)
    tracker = SessionCostTracker()
    tracker.turns = [turn for _, turn in logged]  # the totals below, over every kernel's turns
    recorded = recorded_usages(magics.manager.event_log, session.name)
    recorded_cost = 0.0
    for record, turn in logged:
        u, cost, mark, then = turn.usage, turn.cost_usd, "", recorded.get(record.turn_id)
        if then and not any(u.model_dump().values()):
            # Replayed: nothing spent now (the total counts $0); the line shows what the turn
            # cost when it was recorded, marked so.
            mark, cost = RECORDED_MARK, then.get("cost_usd")
            u = Usage(**{k: int(then.get(k) or 0) for k in Usage.model_fields})
            recorded_cost += cost or 0.0
        shown = "price unknown" if cost is None else f"${cost:.4f}"
        print(f"turn {record.index + 1}: {mark}in {u.input_tokens:,}  out {u.output_tokens:,}  "
              f"cache read {u.cache_read_tokens:,}  cache write {u.cache_creation_tokens:,}  {shown}  ({turn.model or '?'})"
              + ("  ≈ estimated (the server reported no usage)" if u.estimated else "")
              + ("  (replaced by a re-run)" if record.turn_id in replaced else ""))
        if turn.thinking_phase_calls:
            t = turn.thinking_phase_usage
            tc = turn.thinking_phase_cost_usd
            print(f"  thinking phase: {turn.thinking_phase_calls} calls  in {t.input_tokens:,}  out {t.output_tokens:,}  "
                  f"{'price unknown' if tc is None else f'${tc:.4f}'} (included above)")
    for line in comparison_lines(comparisons):
        print(line)
    total = with_comparisons(tracker.total_cost_usd, comparisons)
    approx = "  ≈ estimated in part" if tracker.total_usage.estimated else ""
    replays = f"  (spent now; the replayed turns cost ${recorded_cost:.4f} when recorded)" if recorded_cost else ""
    print(f"total: {'price unknown' if total is None else f'${total:.4f}'}{approx}{replays}")
    print(*budget_lines(magics, session.name), sep="\n")


def cmd_log(magics: Any, rest: list[str]) -> None:
    count = count_arg(rest, "log", default=30)
    session = magics.manager.current
    events = magics.manager.event_log.events(session_id=session.name)[-count:]
    if not events:
        print(f"session {session.name}: no events yet")
    replaced = session.cells.table.replaced(session.name)  # a re-run's earlier turn: kept, marked
    for e in events:
        mark = e.type in ("turn_start", "turn_end") and e.turn_id in replaced
        print(event_line(e) + (f"  [replaced by {replaced[e.turn_id][:6]}]" if mark else ""))
    outside = magics.manager.event_log.records(OUTSIDE_CALL)[-count:]
    if outside:  # what coding agents did here through the server's MCP endpoint (jupyter_brain/server)
        print(f"outside agents (MCP endpoint), last {len(outside)} calls:")
        for record in outside:
            print(outside_line(record))


def cmd_replay(magics: Any, rest: list[str]) -> None:
    session = magics.manager.current
    turns = session.turns()
    if not turns:
        raise UsageError(f"%agent replay: session {session.name} has no turns yet")
    if not rest:
        record = turns[-1]
    else:
        key = rest[0]
        if key.isdigit() and 1 <= int(key) <= len(turns):
            record = turns[int(key) - 1]
        else:
            record = next((t for t in turns if t.turn_id == key), None)
            if record is None:
                raise UsageError(f"%agent replay: no turn {key!r}; use 1-{len(turns)} or a turn id")
    events = numbered_events(magics.manager.event_log.events(turn_id=record.turn_id), record.index + 1)
    view = agent_view(magics.shell, fold=magics.fold)
    if hasattr(view, "replay"):
        view.replay(events)
    else:
        for event in events:
            view.handle(event)
    close_view(view)




def outside_line(record: dict[str, Any]) -> str:
    """One outside agent's call on one line: when, who, which tool, what the gate said, the result."""
    when = time.strftime("%H:%M:%S", time.localtime(record.get("ts", 0)))
    args = record.get("arguments") or {}
    target = args.get("path", "")
    where = f" {target}" + (f" #{args['index']}" if "index" in args else "") if target else ""
    decision = (record.get("decision") or {}).get("how", "")
    return (f"[{when}] {record.get('client', '?')} ({str(record.get('mcp_session', ''))[:6]}) {record.get('tool')}{where}"
            f"  {decision}  {record.get('status')}: {clip(record.get('summary', ''), 70)}")


def event_line(e: Any) -> str:
    """A logged event on one line: its turn, type, step and the detail that matters."""
    step = getattr(e, "step", None)
    head = f"[{e.turn_id[:6]}] {e.type}" + (f" step {step}" if step is not None else "")
    detail = ""
    if e.type in ("text_delta", "thinking_delta"):
        detail = clip(e.text, 80)
    elif e.type in ("tool_call_start", "tool_call_args"):
        detail = e.name
    elif e.type == "tool_call_end":
        detail = f"{e.name} {e.status} {e.duration_ms:.0f} ms"
    elif e.type == "reflection":
        detail = f"{e.trigger}: {clip(e.reflection, 70)}"
    elif e.type == "error":
        detail = f"{e.kind}: {clip(e.message, 70)}"
    elif e.type == "turn_start":
        detail = clip(e.user_message, 70)
    elif e.type == "turn_end":
        detail = f"{e.status}: {clip(e.text, 60)}"
    elif e.type == "budget_warning":
        detail = e.message
    elif e.type == "usage":
        detail = f"in {e.input_tokens} out {e.output_tokens}"
    return f"{head}  {detail}".rstrip()
