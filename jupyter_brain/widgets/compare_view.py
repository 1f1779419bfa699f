"""``CompareView``: live columns (one per strategy run), a summary table, a ToT tree.

It reuses AgentView's protocol per column — each column's live batch is the same
``{"kind": "events", "epoch", "start", "end", "events"}`` — but all columns share one
coalescer: at most one custom message per ``FLUSH_INTERVAL_S`` carries every column's
pending batch, so four concurrent strategies still send ≤ ~30 messages/s in total.
Durable state (column transcripts, table rows, trees, the winner) lives in synced traits,
committed when a run ends, so later views and saved notebooks paint from it.

"Mark best" buttons send ``{"kind": "mark_best", "strategy", "run"}``; the kernel records
a ``decision`` in the event log (processed once the cell has finished, per DESIGN.md).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import Any

import anywidget
import traitlets as t

from jupyter_brain.agent.events import EventBase, EventLog
from jupyter_brain.agent.harness import TurnResult
from jupyter_brain.agent.redact import Redactor, redact_value
from jupyter_brain.agent.strategies import Branch, TreeOfThoughtsStrategy
from jupyter_brain.compare import METRICS, record_decision, summarize

from ._fold import Compactor, Transcript
from ._timer import start_timer
from .agent_view import FLUSH_INTERVAL_S, _bundle_text


class _Column:
    """One run's stream: folded like an AgentView's (durable + pending transcripts)."""

    def __init__(self) -> None:
        self.compactor = Compactor()
        self.durable = Transcript()
        self.pending = Transcript()
        self.sent_n = 0


class CompareView(anywidget.AnyWidget):
    """Feed it with ``handle(strategy, run, event)`` and ``run_finished(row, result)``."""

    columns = t.List(t.Dict()).tag(sync=True)  # {key, strategy, run, transcript, n}
    epoch = t.Int(0).tag(sync=True)
    runs = t.Int(1).tag(sync=True)
    rows = t.List(t.Dict()).tag(sync=True)
    summary = t.List(t.Dict()).tag(sync=True)
    trees = t.Dict().tag(sync=True)  # key -> {threshold, branches: [Branch dict]}
    winner = t.Unicode("").tag(sync=True)
    comparison_id = t.Unicode("").tag(sync=True)
    prompt = t.Unicode("").tag(sync=True)

    @property
    def _esm(self) -> str:
        return _bundle_text("compare_view.js")

    @property
    def _css(self) -> str:
        return _bundle_text("compare_view.css")

    def __init__(self, strategies: list[str], runs: int = 1, prompt: str = "", **kwargs: Any) -> None:
        super().__init__(runs=runs, prompt=prompt, **kwargs)
        self._lock = threading.RLock()
        self._redact = Redactor()  # env keys and known formats; the harness masks each event too
        self._strategies = list(strategies)
        self._cols = {_key(s, r): _Column() for s in strategies for r in range(1, runs + 1)}
        self._last_send = 0.0
        self._timer: threading.Timer | None = None
        self._closed = False
        self._event_log: EventLog | None = None
        self.decisions: list[dict[str, Any]] = []
        self._commit_columns()
        self.summary = summarize([], self._strategies, runs)
        self.on_msg(self._on_front_end_msg)

    # ── feeding ───────────────────────────────────────────────────────────
    def handle(self, strategy: str, run: int, event: EventBase) -> None:
        """Fold one event into its column and stream it (coalesced across columns)."""
        with self._lock:
            col = self._cols.get(_key(strategy, run))
            if col is None or self._closed:
                return
            entry = col.compactor.entry(event)
            col.durable.add(entry)
            col.pending.add(entry)
            now = time.monotonic()
            if self._timer is None and now - self._last_send >= FLUSH_INTERVAL_S:
                self._flush_locked(now)
            self._schedule_locked(now)

    def run_finished(self, row: dict[str, Any], result: TurnResult) -> None:
        """A run ended: commit its column, add its row and (for ToT) its tree."""
        with self._lock:
            self._flush_locked(time.monotonic())
            key = _key(row["strategy"], row["run"])
            branches = [s.model_dump() for s in result.strategy_steps if isinstance(s, Branch)]
            with self.hold_sync():
                self._commit_columns()
                order = list(self._cols)  # strategies as listed, runs in order
                self.rows = sorted([*self.rows, row], key=lambda r: order.index(_key(r["strategy"], r["run"])))
                self.summary = summarize(self.rows, self._strategies, self.runs)
                if branches:
                    threshold = TreeOfThoughtsStrategy().pruning_threshold
                    self.trees = {**self.trees, key: {"threshold": threshold, "branches": branches}}

    def bind(self, comparison_id: str, event_log: EventLog) -> None:
        """Where "mark best" decisions go, once the comparison has an id."""
        self._event_log = event_log
        self.comparison_id = comparison_id

    def mark_best(self, strategy: str, run: int = 1, source: str = "user") -> dict[str, Any]:
        """Record ``strategy`` as the winner (the buttons call this through a message)."""
        if strategy not in self._strategies:
            raise ValueError(f"{strategy!r} is not in this comparison ({', '.join(self._strategies)})")
        if self._event_log is None or not self.comparison_id:
            raise RuntimeError("the comparison has not finished yet")
        decision = record_decision(self._event_log, self.comparison_id, strategy, run=run, source=source)
        self.decisions.append(decision)
        self.winner = strategy
        return decision

    def close_stream(self) -> None:
        """Send what is pending and commit every column."""
        with self._lock:
            self._cancel_timer_locked()
            self._flush_locked(time.monotonic())
            self._commit_columns()

    def close(self) -> None:
        if not getattr(self, "_closed", True):
            self.close_stream()
            self._closed = True
        super().close()

    # ── representations ───────────────────────────────────────────────────
    def to_markdown(self) -> str:
        """The summary table as Markdown (saved notebooks, nbconvert, terminals)."""
        head = ["strategy", "run", "status", *METRICS]
        lines = [f"**Strategy comparison** — {self.prompt}" if self.prompt else "**Strategy comparison**", "",
                 "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for row in self.rows:
            cells = [_fmt(row.get(k), 4 if k == "cost_usd" else 2) for k in head]
            lines.append("| " + " | ".join(cells) + " |")
        for row in self.rows:
            if row.get("error"):
                lines.append(f"\n**{row['strategy']} #{row['run']} failed:** {row['error']}")
        if self.winner:
            lines.append(f"\nWinner: **{self.winner}**")
        return "\n".join(lines)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None or len(self.rows) < len(self._cols):
            return bundle
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        return {**data, "text/markdown": self.to_markdown()}, metadata

    def __repr__(self) -> str:
        return (f"CompareView(strategies={self._strategies}, runs={self.runs}, "
                f"finished={len(self.rows)}/{len(self._cols)}, winner={self.winner or None!r})")

    # ── internals ─────────────────────────────────────────────────────────
    def _on_front_end_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("kind") == "mark_best":
            try:
                self.mark_best(str(content.get("strategy")), int(content.get("run", 1)))
            except (ValueError, RuntimeError, sqlite3.Error):
                pass  # a stale button (a reopened notebook, a closed log): nothing to record

    def _commit_columns(self) -> None:
        self.columns = [
            {"key": key, "strategy": key.rsplit("#", 1)[0], "run": int(key.rsplit("#", 1)[1]),
             # Masked again whole: a key split across two streamed deltas is caught here.
             "transcript": redact_value(col.durable.entries(), self._redact), "n": col.durable.count}
            for key, col in self._cols.items()
        ]

    def _flush_locked(self, now: float) -> None:
        batches = {}
        for key, col in self._cols.items():
            if not col.pending.count:
                continue
            end = col.sent_n + col.pending.count
            batches[key] = {"kind": "events", "epoch": self.epoch, "start": col.sent_n, "end": end,
                            "events": col.pending.entries()}
            col.sent_n = end
            col.pending = Transcript()
        if batches:
            self._last_send = now
            self.send({"kind": "compare", "batches": batches})

    def _schedule_locked(self, now: float) -> None:
        if self._timer is not None or not any(c.pending.count for c in self._cols.values()):
            return
        self._timer = start_timer(self._last_send + FLUSH_INTERVAL_S - now, self._on_timer)

    def _on_timer(self, timer: threading.Timer) -> None:
        with self._lock:
            if self._timer is not timer or self._closed:
                return
            self._timer = None
            now = time.monotonic()
            self._flush_locked(now)
            self._schedule_locked(now)

    def _cancel_timer_locked(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _key(strategy: str, run: int) -> str:
    return f"{strategy}#{run}"


def _fmt(value: Any, digits: int) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)
