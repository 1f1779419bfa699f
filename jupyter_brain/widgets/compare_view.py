"""``CompareView``: live columns (one per strategy run), a summary table, a ToT tree.

It reuses AgentView's protocol per column — each column's live batch is the same
``{"kind": "events", "epoch", "start", "end", "events"}`` — but all columns share one
coalescer (``_batching.FlushScheduler``, AgentView's rule): at most one custom message
per ``FLUSH_INTERVAL_S`` carries every column's pending batch, so four concurrent
strategies still send ≤ ~30 messages/s in total.
Durable state (column transcripts, table rows, trees, the winner) lives in synced traits,
committed when a run ends. When the comparison ends ``close_view`` replaces the widget's
output by ``finished_bundle()`` (``compare_bundle.py``: that state as plain data, drawn by
the JupyterLab extension, with a Markdown fallback) and ``retire()``s the widget, so a
saved notebook reopens without it.

"Mark best" buttons send ``{"kind": "mark_best", "strategy", "run"}``; the kernel records
a ``decision`` in the event log (processed once the cell has finished, per DESIGN.md).
On the finished bundle the extension sends the same over its own comm (``lab_channel.py``).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Any

import traitlets as t

from jupyter_brain.agent.events import EventBase, EventLog
from jupyter_brain.agent.harness import TurnResult
from jupyter_brain.agent.redact import Redactor, redact_value
from jupyter_brain.agent.strategies import Branch, TreeOfThoughtsStrategy
from jupyter_brain.compare import METRICS, record_decision, summarize

from . import _format as fmt
from ._batching import FlushScheduler, TimerFactory
from ._fold import Compactor, Transcript
from ._frontend_code import SharedCodeWidget
from .compare_bundle import compare_bundle
from .compare_notes import header_notes, rate_text, spread_text, verdict_text


class _Column:
    """One run's stream: folded like an AgentView's (durable + pending transcripts)."""

    def __init__(self) -> None:
        self.compactor = Compactor()
        self.durable = Transcript()
        self.pending = Transcript()
        self.sent_n = 0


class CompareView(SharedCodeWidget):
    """Feed it with ``handle(strategy, run, event)`` and ``run_finished(row, result)``.

    ``clock`` and ``timer_factory`` replace ``time.monotonic`` and the timer thread
    (tests drive time by hand with them).
    """

    columns = t.List(t.Dict()).tag(sync=True)  # {key, strategy, run, transcript, n}
    epoch = t.Int(0).tag(sync=True)
    runs = t.Int(1).tag(sync=True)
    rows = t.List(t.Dict()).tag(sync=True)
    summary = t.List(t.Dict()).tag(sync=True)
    trees = t.Dict().tag(sync=True)  # key -> {threshold, branches: [Branch dict]}
    winner = t.Unicode("").tag(sync=True)
    comparison_id = t.Unicode("").tag(sync=True)
    prompt = t.Unicode("").tag(sync=True)
    notes = t.List(t.Unicode()).tag(sync=True)  # the header's: a budget stop, a changed namespace

    _bundle = "compare_view"  # sent once per kernel (``_frontend_code.py``, issue #40)

    def __init__(
        self,
        strategies: list[str],
        runs: int = 1,
        prompt: str = "",
        *,
        clock: Callable[[], float] | None = None,
        timer_factory: TimerFactory | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(runs=runs, prompt=prompt, **kwargs)
        self._lock = threading.RLock()
        self._redact = Redactor()  # env keys and known formats; the harness masks each event too
        self._strategies = list(strategies)
        self._cols = {_key(s, r): _Column() for s in strategies for r in range(1, runs + 1)}
        self._batch = FlushScheduler(
            self._send_pending, lambda: any(c.pending.count for c in self._cols.values()),
            lock=self._lock, clock=clock, timer_factory=timer_factory,
        )
        self._event_log: EventLog | None = None
        self._answers: dict[str, str] = {}  # run key -> its answer, for the Markdown fallback
        self.decisions: list[dict[str, Any]] = []
        self._commit_columns()
        self.summary = summarize([], self._strategies, runs)
        self.on_msg(self._on_front_end_msg)

    # ── feeding ───────────────────────────────────────────────────────────
    def handle(self, strategy: str, run: int, event: EventBase) -> None:
        """Fold one event into its column and stream it (coalesced across columns)."""
        with self._lock:
            col = self._cols.get(_key(strategy, run))
            if col is None or self._batch.closed:
                return
            entry = col.compactor.entry(event)
            col.durable.add(entry)
            col.pending.add(entry)
            self._batch.poke()

    def run_finished(self, row: dict[str, Any], result: TurnResult) -> None:
        """A run ended: commit its column, add its row and (for ToT) its tree."""
        with self._lock:
            self._batch.flush_now()
            key = _key(row["strategy"], row["run"])
            branches = [s.model_dump() for s in result.strategy_steps if isinstance(s, Branch)]
            self._answers[key] = _answer(result)
            with self.hold_sync():
                self._commit_columns()
                order = list(self._cols)  # strategies as listed, runs in order
                self.rows = sorted([*self.rows, row], key=lambda r: order.index(_key(r["strategy"], r["run"])))
                self.summary = summarize(self.rows, self._strategies, self.runs)
                if branches:
                    threshold = TreeOfThoughtsStrategy().pruning_threshold
                    self.trees = {**self.trees, key: {"threshold": threshold, "branches": branches}}

    def finish(self, result: Any) -> None:
        """The comparison ended: what its header must say (``compare_notes.header_notes``)."""
        self.notes = header_notes(result)

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
            self._batch.flush_now()
            self._commit_columns()

    def close(self) -> None:
        batch = getattr(self, "_batch", None)  # None: __init__ failed before it existed
        if batch is not None and not batch.closed:
            self.close_stream()
            with self._lock:
                batch.close()
        super().close()

    # ── representations ───────────────────────────────────────────────────
    def to_markdown(self) -> str:
        """The summary table as Markdown (saved notebooks, nbconvert, terminals)."""
        checked = any(r.get("passed") is not None for r in self.rows)
        metrics = [m for m in METRICS if not m.startswith("judge_") or any(r.get(m) is not None for r in self.rows)]
        head = ["strategy", "run", "status", *(["check"] if checked else []), *metrics]
        lines = [f"**Strategy comparison** — {self.prompt}" if self.prompt else "**Strategy comparison**", ""]
        lines += [f"> **Note:** {note}\n" for note in self.notes]
        if checked or self.runs > 1:
            lines += self._summary_markdown(checked)
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for row in self.rows:
            cells = [("pass" if row.get("passed") else "**FAIL**") if k == "check"
                     else _fmt(row.get(k), 4 if k.endswith("cost_usd") else 2) for k in head]
            lines.append("| " + " | ".join(cells) + " |")
        if any(r.get("replayed") for r in self.rows):  # (#39; notebooks/nbval_sanitize.cfg: replayed-runs)
            lines.append("\n*replayed runs: their tokens and costs are those of the runs that recorded them; "
                         "nothing was spent now*")
        for row in self.rows:
            if row.get("error"):
                lines.append(f"\n**{row['strategy']} #{row['run']} failed:** {row['error']}")
            elif row.get("passed") is False:
                lines.append(f"\n**{row['strategy']} #{row['run']}** {verdict_text(row)}")
        if any(v.get("opinion") for r in self.rows for v in r.get("verdicts") or []):
            lines.append("\n*judge: a model's opinion, not a rule*")
        if self.winner:
            lines.append(f"\nWinner: **{self.winner}**")
        for key in self._cols:
            answer = self._answers.get(key, "").strip()
            if answer:
                lines += ["", f"**{key} answered:**", "", *(f"> {line}" for line in answer.splitlines())]
        return "\n".join(lines)

    def _summary_markdown(self, checked: bool) -> list[str]:
        """Per strategy, success first: rate (Wilson 95 %), mean tokens, cost and time."""
        head = ["strategy", *(["success (95 % CI)"] if checked else []), "tokens", "cost $", "time s"]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for entry in summarize(self.rows, self._strategies, self.runs):
            if not entry["runs"]:
                continue
            tokens = None if entry["input_tokens"] is None else entry["input_tokens"] + (entry["output_tokens"] or 0)
            cells = [entry["strategy"], *([rate_text(entry)] if checked else []), spread_text(tokens, None, 0),
                     spread_text(entry["cost_usd"], entry.get("cost_usd_sd"), 4),
                     spread_text(entry["wall_s"], entry.get("wall_s_sd"), 2)]
            lines.append("| " + " | ".join(cells) + " |")
        return [*lines, ""]

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None or len(self.rows) < len(self._cols):
            return bundle
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        return {**data, "text/markdown": fmt.escape_dollars(self.to_markdown())}, metadata

    def finished_bundle(self) -> dict[str, Any]:
        """The comparison as plain output data (``compare_bundle.py``): what the cell keeps
        once every run has ended and the widget is retired."""
        with self._lock:
            self._commit_columns()
            state = {"columns": self.columns, "runs": self.runs, "rows": self.rows, "summary": self.summary,
                     "trees": self.trees, "winner": self.winner, "comparison_id": self.comparison_id,
                     "prompt": self.prompt, "notes": self.notes}
        markdown = fmt.escape_dollars(redact_value(self.to_markdown(), self._redact))
        return compare_bundle(redact_value(state, self._redact), markdown, repr(self))

    def retire(self) -> None:
        """Close the widget for good, leaving no state behind (as ``AgentView.retire``: nbclient
        and papermill keep a closed model's last state in the notebook)."""
        self.close_stream()
        with self._lock:
            self._batch.close()
        with self.hold_sync():
            self.drop_code()  # the code traits (``_frontend_code.py``)
            self.columns = []  # the transcripts: the bulk of the state
            self.trees = {}
        layout = getattr(self, "layout", None)
        if layout is not None:
            layout.close()
        self.close()

    def __repr__(self) -> str:
        return (f"CompareView(strategies={self._strategies}, runs={self.runs}, "
                f"finished={len(self.rows)}/{len(self._cols)}, winner={self.winner or None!r})")

    # ── internals ─────────────────────────────────────────────────────────
    def _on_front_end_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if self.answer_code_request(content):
            return
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

    def _send_pending(self) -> bool:
        """Send every column's pending batch as one message (False: nothing was pending)."""
        batches = {}
        for key, col in self._cols.items():
            if not col.pending.count:
                continue
            end = col.sent_n + col.pending.count
            batches[key] = {"kind": "events", "epoch": self.epoch, "start": col.sent_n, "end": end,
                            "events": col.pending.entries()}
            col.sent_n = end
            col.pending = Transcript()
        if not batches:
            return False
        self.send({"kind": "compare", "batches": batches})
        return True


def _answer(result: TurnResult) -> str:
    """A run's answer: the strategy's parsed final answer, else the turn's text; a run that
    did not complete has none (its row says why)."""
    if result.status != "completed":
        return ""
    finals = [s for s in result.strategy_steps if getattr(s, "kind", "") == "final_answer"]
    text = getattr(finals[-1], "text", "") if finals else ""
    return str(text or result.text or "")


def _key(strategy: str, run: int) -> str:
    return f"{strategy}#{run}"


def _fmt(value: Any, digits: int) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)
