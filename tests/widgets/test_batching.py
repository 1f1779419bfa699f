"""FlushScheduler: the views' one coalescing rule, driven by a fake clock."""

from __future__ import annotations

import contextvars
import threading
import time
from itertools import pairwise

from jupyter_brain.widgets._batching import FLUSH_INTERVAL_S, FlushScheduler
from jupyter_brain.widgets._timer import start_timer

from .fake_clock import FakeClock

INTERVAL = FLUSH_INTERVAL_S


class Stream:
    """A minimal view: items wait in ``pending``; each send records (time, items)."""

    def __init__(self, clock: FakeClock, **kwargs) -> None:
        self.clock = clock
        self.pending: list[str] = []
        self.sent: list[tuple[float, list[str]]] = []
        self.due_calls: list[float] = []
        self.batch = FlushScheduler(self._send, lambda: bool(self.pending), clock=clock,
                                    timer_factory=clock.start_timer, on_due=self.due_calls.append, **kwargs)

    def _send(self) -> bool:
        if not self.pending:
            return False
        self.sent.append((self.clock(), self.pending))
        self.pending = []
        return True

    def add(self, item: str) -> None:
        with self.batch.lock:
            self.pending.append(item)
            self.batch.poke()


def test_the_first_item_goes_at_once_and_the_rest_after_one_interval(clock: FakeClock) -> None:
    s = Stream(clock)
    s.add("a")
    assert s.sent == [(1000.0, ["a"])] and not s.batch.armed
    s.add("b")
    s.add("c")
    assert len(s.sent) == 1 and s.batch.armed
    (timer,) = clock.armed
    assert timer.due == 1000.0 + INTERVAL  # the remainder of the interval, not a full one from now
    clock.advance(INTERVAL)
    assert s.sent[1] == (1000.0 + INTERVAL, ["b", "c"])
    assert not s.batch.armed  # nothing pending: no timer
    clock.advance(1.0)
    assert len(s.sent) == 2


def test_after_an_idle_interval_an_item_goes_at_once(clock: FakeClock) -> None:
    s = Stream(clock)
    s.add("a")
    clock.advance(INTERVAL * 3)
    s.add("b")
    assert [items for _, items in s.sent] == [["a"], ["b"]]
    assert clock.timers == []  # no timer was ever needed


def test_a_steady_stream_sends_at_most_once_per_interval(clock: FakeClock) -> None:
    s = Stream(clock)
    items = [f"i{n}" for n in range(2000)]
    for item in items:  # 2,000 items/s for one second
        s.add(item)
        clock.advance(0.0005)
    clock.advance(INTERVAL)
    times = [t for t, _ in s.sent]
    assert [i for _, batch in s.sent for i in batch] == items
    assert all(b - a >= INTERVAL * 0.999 for a, b in pairwise(times))
    assert len(s.sent) <= 1.0 / INTERVAL + 2
    assert len(s.sent) >= 25  # really streaming, not one lump


def test_a_timer_slightly_early_still_sends_one_far_too_early_rearms(clock: FakeClock) -> None:
    s = Stream(clock)
    s.add("a")
    s.add("b")
    (timer,) = clock.armed
    clock.now = 1000.0 + INTERVAL * 0.5  # a timer thread waking far too early
    timer.fired = True
    timer.callback(timer)
    assert len(s.sent) == 1
    (again,) = clock.armed
    assert again.due == 1000.0 + INTERVAL  # re-armed for the remainder
    clock.now = 1000.0 + INTERVAL * 0.97  # within the slack
    again.fired = True
    again.callback(again)
    assert s.sent[-1][1] == ["b"]


def test_flush_now_sends_at_once_and_drops_the_timer(clock: FakeClock) -> None:
    s = Stream(clock)
    s.add("a")
    s.add("b")
    (timer,) = clock.armed
    clock.advance(INTERVAL / 3)
    with s.batch.lock:
        s.batch.flush_now()
    assert s.sent[-1] == (clock(), ["b"]) and timer.cancelled and not s.batch.armed
    s.add("c")  # within an interval of that send: waits for the remainder
    assert len(s.sent) == 2
    (later,) = clock.armed
    assert later.due == clock() + INTERVAL


def test_a_cancelled_timer_that_fires_anyway_does_nothing(clock: FakeClock) -> None:
    s = Stream(clock)
    s.add("a")
    s.add("b")
    (timer,) = clock.armed
    with s.batch.lock:
        s.batch.cancel()
    clock.now += INTERVAL
    timer.callback(timer)  # a real timer thread may already be past its cancel check
    assert len(s.sent) == 1 and s.pending == ["b"]


def test_close_stops_sends_from_the_timer(clock: FakeClock) -> None:
    s = Stream(clock)
    s.add("a")
    s.add("b")
    (timer,) = clock.armed
    with s.batch.lock:
        s.batch.close()
    assert s.batch.closed and timer.cancelled
    timer.callback(timer)
    clock.advance(1.0)
    assert len(s.sent) == 1


def test_a_deadline_arms_the_timer_and_fires_after_a_flush(clock: FakeClock) -> None:
    s = Stream(clock)
    s.add("a")
    clock.advance(INTERVAL * 2)
    deadline = clock() + 0.1
    with s.batch.lock:
        s.batch.due_at = deadline
        s.pending.append("b")  # pending, the interval has passed: goes at once
        s.batch.poke()
    assert [items for _, items in s.sent] == [["a"], ["b"]]
    (timer,) = clock.armed
    assert timer.due == deadline
    s.add("c")  # the timer already armed (for the deadline) is the one sender now
    assert len(s.sent) == 2
    clock.advance(0.1)
    assert s.sent[-1] == (deadline, ["c"])  # flushed at the deadline ...
    assert s.due_calls == [deadline]  # ... then on_due
    assert s.batch.due_at is None and not s.batch.armed


def test_the_earlier_of_batch_and_deadline_arms_the_timer(clock: FakeClock) -> None:
    s = Stream(clock)
    s.add("a")
    with s.batch.lock:
        s.batch.due_at = clock() + 0.5
        s.pending.append("b")
        s.batch.poke()
    (timer,) = clock.armed
    assert timer.due == 1000.0 + INTERVAL  # the batch first
    clock.advance(INTERVAL)
    assert s.sent[-1][1] == ["b"] and s.due_calls == []
    (timer,) = clock.armed
    assert timer.due == 1000.5  # then the deadline, with nothing pending
    clock.advance(0.5)
    assert s.due_calls == [1000.5] and len(s.sent) == 2  # nothing to send: on_due alone


def test_a_send_that_sent_nothing_does_not_restart_the_interval(clock: FakeClock) -> None:
    s = Stream(clock)
    with s.batch.lock:
        s.batch.flush_now()  # nothing pending
    assert s.batch.last_send == float("-inf")
    s.add("a")
    assert len(s.sent) == 1


def test_defaults_are_the_monotonic_clock_and_a_context_carrying_timer() -> None:
    batch = FlushScheduler(lambda: False, lambda: False)
    assert batch.clock is time.monotonic
    assert batch._start_timer is start_timer


def test_start_timer_runs_the_callback_in_the_callers_context() -> None:
    """ipykernel routes output by context variables: the timer thread must see the cell's."""
    cell = contextvars.ContextVar("cell", default="none")
    cell.set("cell-7")
    seen: list[tuple[str, threading.Timer]] = []
    done = threading.Event()

    def callback(timer: threading.Timer) -> None:
        seen.append((cell.get(), timer))
        done.set()

    started = start_timer(0.0, callback)
    assert done.wait(10)
    assert seen == [("cell-7", started)]  # and it is handed its own timer
    assert started.daemon
