"""``%agent decisions [N] [--session NAME]``: what the harness chose per turn and what came
of it, plus ``%%compare``'s "Mark best" picks; ``jupyter_brain.decisions()`` gives the same
records to Python (``.to_dataframe()`` for a pandas table)."""

from __future__ import annotations

import time
from typing import Any

from IPython.core.error import UsageError

from ...agent.decisions import DecisionRecords, RuntimeDecisionRecord, default_decision_store
from .text import clip, count_arg

USAGE = "%agent decisions [N] [--session NAME]"
HEAD = ("when", "session", "kind", "model", "strategy", "think", "steps", "status", "tools used/offered",
        "tokens in/out", "cost", "time", "why")


def decisions(n: int | None = None, *, session: str | None = None, kind: str | None = None) -> DecisionRecords:
    """This kernel's decision records (the ``%%agent`` event log's), oldest first: the
    latest ``n``, of one ``session`` or ``kind`` ("turn", "compare_best") if given.

    ``jupyter_brain.decisions().to_dataframe()`` is a pandas DataFrame of them.
    """
    from IPython import get_ipython

    shell = get_ipython()
    magics = None if shell is None else shell.magics_manager.registry.get("AgentMagics")
    if magics is None:
        raise RuntimeError("jupyter_brain.decisions() reads the kernel's agent log: run %load_ext jupyter_brain "
                           "first (elsewhere: SQLiteDecisionStore(EventLog(path)).records())")
    store = default_decision_store(magics.manager.event_log)
    if store is None:
        raise RuntimeError("the event log cannot hold decisions (see the warning logged)")
    return store.records(session, kind=kind, limit=n)


def cmd_decisions(magics: Any, rest: list[str]) -> None:
    session, words = None, list(rest)
    if "--session" in words:
        at = words.index("--session")
        if at + 1 >= len(words):
            raise UsageError(f"{USAGE}: --session needs a session name")
        session = words[at + 1]
        del words[at:at + 2]
    if len(words) > 1 or any(w.startswith("-") for w in words):
        raise UsageError(f"{USAGE}: unexpected {' '.join(words)!r}")
    count = count_arg(words, "decisions", default=20)
    store = default_decision_store(magics.manager.event_log)
    if store is None:
        print("decisions are not recorded: the event log cannot hold them (see the warning logged)")
        return
    records = store.latest(count, session_id=session)
    if not records:
        where = f"session {session}" if session else "this event log"
        print(f"no decisions yet in {where} (each %%agent turn records one)")
        return
    print(decision_table(records))
    print("as a DataFrame: jupyter_brain.decisions().to_dataframe()")


def decision_table(records: list[RuntimeDecisionRecord]) -> str:
    """A compact text table, one line per record, columns as wide as their widest cell."""
    rows = [HEAD, *(_cells(r) for r in records)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEAD) - 1)]
    lines = []
    for row in rows:
        cells = [c.rjust(w) if i in (6, 9, 10, 11) else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=False))]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines)


def _cells(r: RuntimeDecisionRecord) -> tuple[str, ...]:
    when = time.strftime("%m-%d %H:%M", time.localtime(r.created))
    model = "/".join(x for x in (r.provider, r.model) if x) or "-"
    if r.kind == "compare_best":
        compared = ", ".join(r.detail.get("strategies") or [])
        why = f"best of {compared}" + (f" ({clip(r.detail.get('prompt', ''), 30)})" if r.detail.get("prompt") else "")
        tools = "-"
    else:
        why = r.stop_reason
        tools = f"{len(r.tools_used)}/{len(r.tools_offered)}"
        if r.tools_used:
            tools += " " + clip(",".join(r.tools_used), 24)
    cost = "-" if r.cost_usd is None else f"${r.cost_usd:.4f}"
    return (when, clip(r.session_id, 18), r.kind, clip(model, 28), r.strategy or "-", r.think_level, str(r.steps),
            r.status or "-", tools, f"{r.input_tokens:,}/{r.output_tokens:,}", cost, f"{r.duration_s:.1f}s",
            clip(why, 60))
