"""A daemon timer that runs its callback in the caller's context.

ipykernel attributes output and comm messages to the cell through context variables,
so a flush fired from a timer thread must carry the context of the cell that armed it.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable


def start_timer(delay_s: float, callback: Callable[[threading.Timer], None]) -> threading.Timer:
    """Start a daemon timer calling ``callback(timer)`` after ``delay_s`` (at least 0)."""
    ctx = contextvars.copy_context()
    timer = threading.Timer(max(0.0, delay_s), lambda: ctx.run(callback, timer))
    timer.daemon = True
    timer.start()
    return timer
