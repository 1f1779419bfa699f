"""The worker threads tool calls run on, and one call's run (``Run``).

A call runs in a copy of the submitting thread's context variables, with its
``ToolContext`` (agent/tool_context.py) current, so what the tool reports reaches its turn.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from typing import Any

from .tool_context import ToolContext
from .tools import ToolSpec

WAIT_SLICE_S = 0.25  # how late a Ctrl-C that raced the wait is seen, at most


class Run:
    """One tool invocation on a worker thread; ``wait`` is true once it returned or raised.

    Completion is a bare lock, held until the call ends: handing it over costs a fraction of
    a ``threading.Event`` (a condition and a fresh lock per wait). Waiting on it is
    interruptible by Ctrl-C just the same. The call runs in a copy of the caller's context
    variables, with its ``ToolContext`` current.
    """

    __slots__ = ("_done", "context", "exc", "spec", "tool", "validated", "value")

    def __init__(self, spec: ToolSpec, validated: Any, tool: ToolContext) -> None:
        self.spec = spec
        self.validated = validated
        self.tool = tool
        self.context = contextvars.copy_context()
        self.value: Any = None
        self.exc: BaseException | None = None
        self._done = threading.Lock()
        self._done.acquire()

    def start(self) -> Run:
        WORKERS.submit(self)
        return self

    def wait(self, timeout: float) -> bool:
        """True once the call ended, False after ``timeout``. Waited in slices: a Ctrl-C that
        lands just before the thread blocks does not wake a lock wait (CPython runs the handler
        when the wait returns), so a slice bounds how late it is seen."""
        deadline = time.monotonic() + min(max(0.0, timeout), threading.TIMEOUT_MAX)
        while True:
            left = deadline - time.monotonic()
            if self._done.acquire(timeout=max(0.0, min(left, WAIT_SLICE_S))):
                self._done.release()  # stays "done" for any later wait
                return True
            if left <= WAIT_SLICE_S:
                return False

    def execute(self) -> None:
        try:
            self.value = self.context.run(self._invoke)
        except BaseException as exc:  # noqa: BLE001 - reported to the model
            self.exc = exc
        finally:
            self._done.release()

    def _invoke(self) -> Any:
        with self.tool.active():
            return self.spec.invoke(self.validated)

    def settle(self, abandoned: bool) -> None:
        """The executor is done with this call. Abandoned (its timeout, a Ctrl-C): the
        context's cancellation callbacks run (an MCP client cancels its request). Either way
        later reports are dropped."""
        if abandoned:
            self.tool.cancel()
        self.tool.close()


class Workers:
    """Reusable daemon threads for tool calls.

    Starting a thread per call costs a context switch before the call even begins; an
    idle worker takes the job at once. A worker stuck in a hung tool simply never comes
    back, and being a daemon it never blocks the interpreter's exit.
    """

    MAX_IDLE = 16

    def __init__(self) -> None:
        self._idle: list[queue.SimpleQueue[Run | None]] = []
        self._lock = threading.Lock()

    def submit(self, run: Run) -> None:
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            threading.Thread(target=self._work, args=(inbox,), name="jupyter-brain-tool", daemon=True).start()
        inbox.put(run)

    def _work(self, inbox: queue.SimpleQueue[Run | None]) -> None:
        while True:
            run = inbox.get()
            if run is None:
                return
            threading.current_thread().name = f"tool:{run.spec.name}"
            run.execute()
            with self._lock:
                if len(self._idle) >= self.MAX_IDLE:
                    return
                self._idle.append(inbox)


WORKERS = Workers()
