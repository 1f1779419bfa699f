"""``FlushScheduler``: the one coalescing rule both live views follow.

DESIGN.md's measured limits: the Jupyter server drops iopub past 1,000 messages/s and a
growing trait re-sent per token is quadratic, so views send what is pending at most once
per ``interval_s`` (one message carrying everything). The rule, written once here:

* new data and no timer armed: send at once if the interval has passed since the last
  send, otherwise arm one timer for the remainder (the timer is then the only sender, so
  sends stay ``interval_s`` apart);
* an optional deadline (``due_at``; AgentView's deferred transcript commit) also arms the
  timer; when it passes, the timer sends what is pending and calls ``on_due``.

The clock and the timer factory are injectable so tests drive time by hand; the default
timer carries the cell's context variables into its thread (ipykernel routes output by
them, see ``_timer.py``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from ._timer import start_timer

FLUSH_INTERVAL_S = 0.033  # live batches: ≤ ~30 messages/s

_EARLY_SLACK = 0.95  # a timer firing this close to the interval still sends
_DUE_SLACK_S = 0.002  # ... and this close to the deadline still counts as due


class Cancellable(Protocol):
    def cancel(self) -> None: ...


TimerFactory = Callable[[float, Callable[[Any], None]], Cancellable]
"""``factory(delay_s, callback)`` starts a timer calling ``callback(timer)`` once."""


class FlushScheduler:
    """Decides when a view's pending data goes out; the view decides what goes out.

    ``send()`` sends everything pending and returns whether a message went out;
    ``has_pending()`` says whether anything waits. Both are called with ``lock`` held,
    and every method here expects the caller to hold it (the timer thread takes it).
    """

    def __init__(
        self,
        send: Callable[[], bool],
        has_pending: Callable[[], bool],
        *,
        lock: threading.RLock | None = None,
        interval_s: float = FLUSH_INTERVAL_S,
        on_due: Callable[[float], None] | None = None,
        clock: Callable[[], float] | None = None,
        timer_factory: TimerFactory | None = None,
    ) -> None:
        self.lock = lock if lock is not None else threading.RLock()
        self.interval_s = interval_s
        self.clock: Callable[[], float] = clock or time.monotonic
        self.last_send = float("-inf")
        self.due_at: float | None = None  # a deadline besides the next batch (cleared when it fires)
        self.closed = False
        self._send = send
        self._has_pending = has_pending
        self._on_due = on_due
        self._start_timer: TimerFactory = timer_factory or start_timer
        self._timer: Cancellable | None = None

    @property
    def armed(self) -> bool:
        """Whether a timer is waiting to fire."""
        return self._timer is not None

    def poke(self, now: float | None = None) -> None:
        """New data is pending: send now if the stream was idle for an interval, else arm."""
        now = self.clock() if now is None else now
        if self._timer is None and now - self.last_send >= self.interval_s:
            self._flush(now)
        self._arm(now)

    def flush_now(self, now: float | None = None) -> None:
        """Send what is pending at once (a turn or run ended), dropping the armed timer."""
        self.cancel()
        self._flush(self.clock() if now is None else now)

    def cancel(self) -> None:
        """Disarm the timer; pending data waits for the next ``poke`` or ``flush_now``."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def close(self) -> None:
        """No more sends: disarm, and ignore a timer already firing."""
        self.cancel()
        self.closed = True

    # ── internals ─────────────────────────────────────────────────────────
    def _flush(self, now: float) -> None:
        if self._send():
            self.last_send = now

    def _arm(self, now: float) -> None:
        """Arm the timer for the next batch or the deadline, whichever comes first."""
        if self._timer is not None:
            return
        dues = [self.last_send + self.interval_s] if self._has_pending() else []
        if self.due_at is not None:
            dues.append(self.due_at)
        if dues:
            self._timer = self._start_timer(min(dues) - now, self._fire)

    def _fire(self, timer: Any) -> None:
        with self.lock:
            if self._timer is not timer or self.closed:
                return  # cancelled (or replaced) after it started firing
            self._timer = None
            now = self.clock()
            due = self.due_at is not None and now >= self.due_at - _DUE_SLACK_S
            if due or now - self.last_send >= self.interval_s * _EARLY_SLACK:
                self._flush(now)
            if due:
                self.due_at = None
                if self._on_due is not None:
                    self._on_due(now)
            self._arm(now)
