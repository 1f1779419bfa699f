"""A hand-driven clock and timer factory for the views' batching (no sleeps, no threads).

Pass ``clock=fake, timer_factory=fake.start_timer`` to a view or a ``FlushScheduler``;
``fake.advance(s)`` moves time on and fires, in order, every timer that falls due, each
at its own due time (as a real timer thread would).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class FakeTimer:
    def __init__(self, due: float, callback: Callable[[Any], None]) -> None:
        self.due = due
        self.callback = callback
        self.cancelled = False
        self.fired = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.timers: list[FakeTimer] = []

    def __call__(self) -> float:
        return self.now

    def start_timer(self, delay_s: float, callback: Callable[[Any], None]) -> FakeTimer:
        timer = FakeTimer(self.now + max(0.0, delay_s), callback)
        self.timers.append(timer)
        return timer

    @property
    def armed(self) -> list[FakeTimer]:
        """Timers started, not cancelled and not fired yet."""
        return [t for t in self.timers if not (t.cancelled or t.fired)]

    def advance(self, seconds: float) -> None:
        """Move time on by ``seconds``, firing each timer due by then at its due time."""
        end = self.now + seconds
        while True:
            due = [t for t in self.armed if t.due <= end]
            if not due:
                break
            timer = min(due, key=lambda t: t.due)
            self.now = max(self.now, timer.due)
            timer.fired = True
            timer.callback(timer)
        self.now = end
