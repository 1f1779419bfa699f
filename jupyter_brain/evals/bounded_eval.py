"""A ``--check`` expression with a time limit: one that never ends must not hang the kernel.

The expression is evaluated in a worker thread, and the caller waits at most ``timeout_s``.
A waiting caller alone would leave a runaway loop burning the kernel's CPU, so the worker
also runs under a trace function: once the time is up, the next Python-level event of
the check (a line of its own code, a generator resumed, any function called) raises
``CheckTimedOut`` there, and the worker ends. What cannot be stopped this way is a loop
entirely inside C code (``sum(iter(int, 1))``): it never returns to Python, holds the
interpreter lock, and no in-process means can interrupt it; the check's reason says so
when the worker did not end.
"""

from __future__ import annotations

import contextvars
import sys
import threading
from types import CodeType, FrameType
from typing import Any

CHECK_FILENAME = "<check>"  # the file name checks are compiled with (their own frames are traced line by line)
STOP_GRACE_S = 0.5  # how long a timed-out worker is given to stop at its next traced event


class CheckTimedOut(Exception):
    """The check ran longer than its limit. ``stopped``: the worker ended after it."""

    def __init__(self, timeout_s: float, stopped: bool = True) -> None:
        self.timeout_s, self.stopped = timeout_s, stopped
        more = "" if stopped else "; it could not be stopped (it waits or loops inside C code) and runs on in the background"
        super().__init__(f"timed out after {timeout_s:g} s{more}")


def eval_with_timeout(code: CodeType, scope: dict[str, Any], timeout_s: float | None) -> Any:
    """``eval(code, scope)``, or ``CheckTimedOut`` after ``timeout_s`` seconds (None or
    ≤ 0: no limit, in the calling thread)."""
    if timeout_s is None or timeout_s <= 0:
        return eval(code, scope)  # the user's own expression, in the user's kernel
    stop = threading.Event()
    done = threading.Event()
    outcome: dict[str, Any] = {}

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if stop.is_set():
            raise CheckTimedOut(timeout_s)
        return local

    def on_call(frame: FrameType, event: str, arg: Any) -> Any:
        if stop.is_set():
            raise CheckTimedOut(timeout_s)
        # The check's own frames (a comprehension, a generator) line by line; a library's
        # frames only when they are entered, which keeps pandas and numpy fast.
        return local if frame.f_code.co_filename == CHECK_FILENAME else None

    def worker() -> None:
        sys.settrace(on_call)
        try:
            outcome["value"] = eval(code, scope)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller as it is
            outcome["error"] = exc
        finally:
            sys.settrace(None)
            done.set()

    context = contextvars.copy_context()  # the caller's (ipykernel ties output to the cell by it)
    threading.Thread(target=context.run, args=(worker,), name="check", daemon=True).start()
    if not done.wait(timeout_s):
        stop.set()
        raise CheckTimedOut(timeout_s, stopped=done.wait(STOP_GRACE_S))
    if "error" in outcome:
        error = outcome["error"]
        if isinstance(error, CheckTimedOut):  # it ended just as the time ran out
            raise CheckTimedOut(timeout_s)
        raise error
    return outcome["value"]


__all__ = ["CHECK_FILENAME", "CheckTimedOut", "eval_with_timeout"]
