"""``AgentView``: the live anywidget view of agent turns.

Two channels to the browser, because the measured facts in DESIGN.md demand it:

* **Live stream** — custom messages, each one batch ``{"kind": "events", "epoch", "start",
  "end", "events"}`` carrying every event handled since the previous batch, consecutive
  deltas of one block concatenated. At most one batch per ``FLUSH_INTERVAL_S`` (~33 ms,
  so ≤ 30 messages/s whatever the token rate; a turn's first text delta goes at once, so the
  timer never holds back the first word); trailing data is sent by a timer thread
  (ipykernel sends from any thread: comm messages go through the IOPub thread's queue).
* **Durable transcript** — the synced ``transcript`` trait (compact entries, linear in the
  text) with ``transcript_n`` (raw events folded in) and ``epoch`` (bumped by ``replay``/
  ``reset``), committed under ``hold_sync()`` at step ends (at most every
  ``commit_interval``, which grows with the transcript) and at turn end. Later views and re-opened notebooks paint from
  it; a browser that missed batches resyncs from it.

``start``/``end`` count raw events, so the front-end knows which batches a transcript
already contains. A commit always follows a flush, so it lands on a batch boundary.
When to send is ``_batching.FlushScheduler``'s rule (shared with ``CompareView``); the
deferred step-end commit is its deadline.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

import traitlets as t

from jupyter_brain.agent.events import EventBase
from jupyter_brain.agent.redact import Redactor, redact_value
from jupyter_brain.settings import FOLD_CHOICES

from . import _format as fmt
from ._batching import FLUSH_INTERVAL_S, FlushScheduler, TimerFactory
from ._fold import Compactor, Entry, Transcript
from ._frontend_code import NO_CODE_ESM, BundleMissingError, SharedCodeWidget
from ._header import Header
from .turn_bundle import turn_bundle

__all__ = ["COMMIT_DELAY_S", "COMMIT_INTERVAL_S", "FLUSH_INTERVAL_S", "NO_CODE_ESM", "AgentView", "BundleMissingError"]

COMMIT_INTERVAL_S = 0.5  # transcript commits at step ends: ≤ 2 state updates/s
COMMIT_DELAY_S = 0.1  # a step end's commit waits this long, in case the turn ends now
# Each commit re-sends the whole transcript, which the browser parses and diffs on its main
# thread: past this many entries the interval grows with the transcript (a 200-step turn
# commits every few seconds, not twice a second), so the total sent stays near linear.
COMMIT_GROWTH_ENTRIES = 250


def commit_interval(entries: int) -> float:
    """Seconds between two step-end commits of a transcript of ``entries`` entries."""
    return COMMIT_INTERVAL_S * max(1.0, entries / COMMIT_GROWTH_ENTRIES)

class AgentView(SharedCodeWidget):
    """Live view of agent turns: feed it events with ``handle`` (the harness's ``on_event``).

    Display it before streaming into it (``display(view)``), as DESIGN.md notes.
    ``clock`` and ``timer_factory`` replace ``time.monotonic`` and the timer thread
    (tests drive time by hand with them).
    """

    transcript = t.List(t.Dict()).tag(sync=True)
    transcript_n = t.Int(0).tag(sync=True)
    epoch = t.Int(0).tag(sync=True)

    # Header facts, from events only (never configuration or credentials).
    session_id = t.Unicode("").tag(sync=True)
    turn = t.Int(0).tag(sync=True)
    status = t.Unicode("idle").tag(sync=True)
    step = t.Int(0).tag(sync=True)
    steps = t.Int(0).tag(sync=True)
    model_label = t.Unicode("").tag(sync=True)
    think_level = t.Unicode("").tag(sync=True)
    strategy = t.Unicode("").tag(sync=True)
    usage = t.Dict().tag(sync=True)
    # "auto": a finished turn's steps fold under one summary line; "never": they stay open.
    fold = t.Enum(FOLD_CHOICES, default_value="auto").tag(sync=True)

    _bundle = "agent_view"

    def __init__(
        self,
        events: Iterable[EventBase | Entry] | None = None,
        *,
        clock: Callable[[], float] | None = None,
        timer_factory: TimerFactory | None = None,
        drawn: bool = True,
        **kwargs: Any,
    ) -> None:
        # drawn=False: no front-end will draw it (a headless kernel: nbclient, nbconvert,
        # papermill), so it carries no JS or CSS; the finished turn's bundle and the saved
        # notebook are the same (issue #24). A drawn one carries the ~200 KB bundle only when
        # it is the kernel's first (``_frontend_code.py``, issue #40).
        super().__init__(drawn=drawn, **kwargs)
        self._lock = threading.RLock()
        self._header = Header()
        self._compactor = Compactor()
        self._durable = Transcript()
        self._pending = Transcript()
        self._sent_n = 0  # raw events already sent live
        self._last_commit = float("-inf")
        self._answer_started = False  # a text delta of this turn was sent (the first one goes at once)
        # Its deadline (``due_at``) is the deferred step-end commit.
        self._batch = FlushScheduler(
            self._send_pending, lambda: bool(self._pending.count), lock=self._lock,
            on_due=self._commit_locked, clock=clock, timer_factory=timer_factory,
        )
        # Masks secrets in what is saved (transcript trait, Markdown): the harness masks
        # each event, this also catches a key split across two streamed deltas.
        self.redact: Any = Redactor()
        self._decisions: dict[str, bool] = {}
        self._elicitations: dict[str, dict[str, Any]] = {}  # an MCP server's form or link card, answered
        # Set where the finished turn replaces the widget (``notebook/views.close_view``): the
        # turn end's commit, the whole transcript again, would be sent and dropped at once.
        self.finishes_as_bundle = False
        self.frontend_ready = False  # set by the front-end's "ready" message (a widget manager holds the model)
        self.on_msg(self._on_frontend_msg)
        if events is not None:
            self.replay(events)

    # ── public API ────────────────────────────────────────────────────────
    def handle(self, event: EventBase | Entry) -> None:
        """Fold one event in and stream it (coalesced). Thread-safe.

        Sends at once only when the stream was idle for an interval, or for the turn's first
        text delta (the first word is never held back); otherwise the timer is the one
        sender, so batches stay ≥ ``FLUSH_INTERVAL_S`` apart. A turn end
        flushes and commits at once; a step end schedules a commit (flush first, so a
        commit always lands on a batch boundary).
        """
        with self._lock:
            if self._batch.closed:
                return
            entry = self._compactor.entry(event)
            etype = entry["type"]
            self._durable.add(entry)
            self._pending.add(entry)
            self._header.update(entry)
            now = self._batch.clock()
            if etype == "turn_end":
                self._batch.flush_now(now)
                if not self.finishes_as_bundle:  # else the finished turn's output supersedes it
                    self._commit_locked(now)
                return
            if etype == "turn_start":
                self._answer_started = False
            elif etype == "text_delta" and not self._answer_started:
                # The turn's first words go out at once, not after the batch timer (issue #26).
                self._answer_started = True
                self._batch.flush_now(now)
            if etype == "step_end" and self._batch.due_at is None:
                # Deferred a little, so a turn end right after makes it one commit, not two.
                interval = commit_interval(len(self._durable))
                self._batch.due_at = max(now + COMMIT_DELAY_S, self._last_commit + interval)
            self._batch.poke(now)

    def replay(self, events: Iterable[EventBase | Entry]) -> AgentView:
        """Show a recorded stream (e.g. ``EventLog.events(turn_id=...)``), replacing what
        the view showed; one transcript commit, no live messages."""
        with self._lock:
            self._batch.cancel()
            self._header = Header()
            self._compactor = Compactor()
            self._durable = Transcript()
            self._pending = Transcript()
            for event in events:
                entry = self._compactor.entry(event)
                self._durable.add(entry)
                self._header.update(entry)
            self._sent_n = self._durable.count
            self._bump_epoch_and_commit_locked()
        return self

    def reset(self) -> None:
        """Clear the view (all its views in the browser too)."""
        self.replay(())

    def close_stream(self) -> None:
        """Send everything pending now and commit the transcript; stop the timer."""
        with self._lock:
            now = self._batch.clock()
            self._batch.flush_now(now)
            if self._durable.count != self.transcript_n:
                self._commit_locked(now)

    def flush(self) -> None:
        """Send everything pending now, without a transcript commit."""
        with self._lock:
            self._batch.flush_now(self._batch.clock())

    def close(self) -> None:
        batch = getattr(self, "_batch", None)  # None: __init__ failed before it existed
        if batch is not None and not batch.closed:
            self.close_stream()
            with self._lock:
                batch.close()
        super().close()

    def decision_for(self, call_id: str) -> bool | None:
        """The user's click on the approval card of ``call_id``, if any arrived yet."""
        with self._lock:
            return self._decisions.get(call_id)

    def elicitation_for(self, call_id: str) -> dict[str, Any] | None:
        """The user's answer on the elicitation card of ``call_id`` ({action, content}), if any."""
        with self._lock:
            return self._elicitations.get(call_id)

    def _on_frontend_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """Messages from the browser: a view rendered, or an approval click.

        They arrive only when the kernel processes its shell queue, which a running
        ``%%agent`` cell does while it waits for a decision (``NotebookApprover``).
        """
        if not isinstance(content, dict) or self.answer_code_request(content):
            return
        kind = content.get("kind")
        with self._lock:
            if kind == "ready":
                self.frontend_ready = True
            elif kind == "approval" and isinstance(content.get("call_id"), str):
                self.frontend_ready = True
                self._decisions.setdefault(content["call_id"], content.get("approved") is True)
            elif kind == "elicitation" and isinstance(content.get("call_id"), str):
                self.frontend_ready = True
                self._elicitations.setdefault(content["call_id"], {
                    "action": content.get("action"), "content": content.get("content")})

    @property
    def entries(self) -> list[Entry]:
        """The compact transcript as it stands now (committed or not)."""
        with self._lock:
            return self._durable.entries()

    def to_markdown(self) -> str:
        """The transcript as Markdown (nbconvert, terminals, logs)."""
        # Imported when the turn is written out, not before its first word (#40).
        from .text_view import events_to_markdown

        return self.redact(events_to_markdown(self.entries))

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget view, plus the transcript as Markdown once there is one.

        JupyterLab renders the live widget; where its model is gone (a notebook saved
        without widget state), nbconvert, GitHub or a terminal front-end show the
        Markdown instead. The magic re-publishes this bundle when the turn ends.
        """
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None or self._header.status in ("idle", "running"):
            return bundle
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        return {**data, "text/markdown": fmt.escape_dollars(self.to_markdown())}, metadata

    def finished_bundle(self) -> dict[str, Any]:
        """The turn as plain output data (``turn_bundle.py``): what the cell keeps once the
        turn is final and the widget is retired."""
        with self._lock:
            h = self._header
            header = {"session_id": h.session_id, "turn": h.turn, "status": h.status, "steps": h.steps}
            entries = redact_value(self._durable.entries(), self.redact)
        return turn_bundle(entries, fmt.escape_dollars(self.to_markdown()), fold=self.fold,
                           header=header, plain=repr(self))

    def retire(self) -> None:
        """Close the widget for good, leaving no state behind: its synced traits (the JS
        and CSS above all) are emptied first, because nbclient and papermill keep a closed
        model's last state in the notebook (they ignore ``comm_close``); JupyterLab drops it."""
        self.flush()
        with self._lock:
            self._batch.close()
        with self.hold_sync():
            self.drop_code()
            self.transcript = []
            self.transcript_n = 0
            self.usage = {}
        layout = getattr(self, "layout", None)
        if layout is not None:
            layout.close()
        self.close()

    def __repr__(self) -> str:
        h = self._header
        session = h.session_id or "-"
        return f"AgentView(session={session!r}, turn={h.turn}, status={h.status!r}, steps={h.steps})"

    # ── coalescing (when: ``self._batch``; what: below) ─────────────────────
    def _send_pending(self) -> bool:
        """Send all pending events as one custom message (False: nothing was pending)."""
        if not self._pending.count:
            return False
        end = self._sent_n + self._pending.count
        batch = {
            "kind": "events",
            "epoch": self.epoch,
            "start": self._sent_n,
            "end": end,
            "events": self._pending.entries(),
        }
        self._sent_n = end
        self._pending = Transcript()
        self.send(batch)
        return True

    def _commit_locked(self, now: float) -> None:
        """Commit transcript + header traits in one state update (after a flush)."""
        h = self._header
        with self.hold_sync():
            self.transcript = redact_value(self._durable.entries(), self.redact)
            self.transcript_n = self._durable.count
            self.session_id = h.session_id
            self.turn = h.turn
            self.status = h.status
            self.step = h.step
            self.steps = h.steps
            self.model_label = h.model_label
            self.think_level = h.think_level
            self.strategy = h.strategy
            self.usage = {
                "input_tokens": h.input_tokens,
                "output_tokens": h.output_tokens,
                "cache_read_tokens": h.cache_read_tokens,
                "cache_creation_tokens": h.cache_creation_tokens,
                "cost_usd": h.cost_usd,
                "duration_ms": h.duration_ms,
                "usage_estimated": h.usage_estimated,
            }
        self._last_commit = now
        self._batch.due_at = None

    def _bump_epoch_and_commit_locked(self) -> None:
        with self.hold_sync():
            self.epoch += 1
            self._commit_locked(self._batch.clock())
