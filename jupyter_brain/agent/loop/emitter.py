"""The one event stream of a turn: stamp, mask, log, then fan out to every consumer.

The log, the widget, the text view and user callbacks all receive the same masked event
object, so no view can show a secret that another view hides. Events may come from other
threads (a tool's progress, an MCP server's log line): one lock keeps ``seq`` in the order
every consumer sees them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from ..callbacks import AgentCallbacks
from ..events import ErrorEvent, EventBase, EventLog
from ..hooks import StopTurn
from ..redact import redact_value

log = logging.getLogger("jupyter_brain.harness")

Observer = Callable[[EventBase], None]

_NOT_REDACTED = frozenset({"session_id", "turn_id", "seq", "ts", "type", "step", "call_id"})


class EventEmitter:
    """Stamps events with ids and order, then fans them out to log and callbacks."""

    def __init__(self, *, session_id: str, turn_id: str, event_log: EventLog | None,
                 callbacks: AgentCallbacks, redact: Callable[[str], str] | None,
                 extra: Callable[[Any], Any] | None) -> None:
        self.log = event_log
        self.callbacks = callbacks
        self.session_id = session_id
        self.turn_id = turn_id
        self.extra = extra
        self._fire = callbacks.fire if callbacks.wants("on_event") else None
        # The hooks' on_event (HookDispatcher.event_observers), called from here so an event
        # passes through nothing more; a failure is dropped and handed to ``observer_failed``.
        self.observers: tuple[Observer, ...] = ()
        self.observer_failed: Callable[[Observer, BaseException], None] | None = None
        self.redact = redact
        self.seq = 0
        self.closing = False  # the turn is ending: a Ctrl-C from a callback cannot stop it any more
        self._lock = threading.RLock()  # re-entrant: a consumer may emit from inside

    def __call__(self, event: EventBase) -> None:
        with self._lock:
            self._emit(event)

    def _emit(self, event: EventBase) -> None:
        # Plain fields: set them directly (pydantic's __setattr__ costs ~1.5 µs each).
        event.__dict__.update(session_id=self.session_id, turn_id=self.turn_id, seq=self.seq)
        if self.redact is not None:
            redact_fields(event, self.redact)
        self.seq += 1
        if self.log is not None:
            try:
                self.log.append(event)
            except Exception as exc:  # noqa: BLE001 - a full disk must not kill the turn
                log.error("event log write failed: %s", exc)
        for observe in self.observers:
            try:
                observe(event)
            except (Exception, StopTurn) as exc:  # noqa: BLE001 - reported once by the dispatcher, then left out
                # (an event cannot stop the turn: StopTurn counts only at the points that may)
                self.observers = tuple(o for o in self.observers if o is not observe)
                if self.observer_failed is not None:
                    self.observer_failed(observe, exc)
        if self._fire is not None:
            self._fire("on_event", event)
        if self.extra is not None:
            try:
                self.extra(event)
            except KeyboardInterrupt:
                if not (self.closing or isinstance(event, ErrorEvent)):
                    raise
            except Exception:  # a view bug must not end the turn
                log.exception("on_event callback failed")


def redact_fields(event: EventBase, redact: Callable[[str], str]) -> None:
    """Mask secrets in an event's text fields in place (ids and numbers untouched)."""
    fields = event.__dict__
    for key, value in fields.items():
        if key in _NOT_REDACTED or value is None or isinstance(value, (int, float, bool)):
            continue
        masked = redact_value(value, redact)
        if masked is not value:
            fields[key] = masked
