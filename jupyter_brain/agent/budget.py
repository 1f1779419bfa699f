"""TurnBudget: the hard limits of one turn (wall-clock deadline, steps, reflections)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

DEFAULT_MAX_REFLECTIONS = 4


class TurnBudget:
    """Shared, thread-safe counters so parallel tools and reflections never overrun a turn."""

    def __init__(
        self,
        timeout_s: float = 60.0,
        max_steps: int = 6,
        max_reflections: int = DEFAULT_MAX_REFLECTIONS,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self.started = clock()
        self.timeout_s = float(timeout_s)
        self.deadline = self.started + self.timeout_s
        self.max_steps = int(max_steps)
        self.max_reflections = int(max_reflections)
        self._steps = 0
        self._reflections = 0
        self._lock = threading.Lock()

    @property
    def steps(self) -> int:
        return self._steps

    @property
    def reflections(self) -> int:
        return self._reflections

    def claim_step(self) -> bool:
        """Take one model-call slot; False once ``max_steps`` are used."""
        with self._lock:
            if self._steps >= self.max_steps:
                return False
            self._steps += 1
            return True

    def claim_reflection(self) -> bool:
        """Take one reflection slot atomically; False once the per-turn cap is reached."""
        with self._lock:
            if self._reflections >= self.max_reflections:
                return False
            self._reflections += 1
            return True

    def extend(self, seconds: float) -> None:
        """Move the deadline: time spent waiting for the user is not the agent's time."""
        with self._lock:
            self.deadline += max(0.0, float(seconds))

    def remaining_s(self) -> float:
        return max(0.0, self.deadline - self._clock())

    def elapsed_s(self) -> float:
        return self._clock() - self.started

    def is_expired(self) -> bool:
        return self._clock() >= self.deadline
