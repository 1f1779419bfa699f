"""What a running tool may tell its turn, from any thread: progress, server logs, usage.

The executor sets a ``ToolContext`` around each tool invocation (a context variable, copied
into the worker thread), so a tool that talks to something long-lived, such as an MCP
server, can report progress on its timeline row, pass the server's log lines to the event
log, and charge model usage (an MCP server's sampling request) to the turn, without the
tool knowing the turn. Time a call spends waiting for the user (``waiting_for_user()``:
the approval of a server's sampling request) is added to its timeout. When the executor
gives up on a call (its timeout, a Ctrl-C), it calls ``cancel()``: the callbacks registered with ``on_cancel`` run (the MCP client cancels
the request, which sends the protocol's cancellation). After ``close()`` (the call ended,
one way or another) every report is dropped: a late progress notification must not land
after the call's end event.

Events from outside any tool call (an MCP server's log line between calls) reach the turn
that is running, if any, through ``running_turn()``; the loop registers its emitter with
``TurnEvents.enter`` for the turn's duration.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("jupyter_brain.agent.tools")

Emit = Callable[[Any], None]
# (provider, model, input_tokens, output_tokens, cost_usd, label) -> None: the turn's usage sink
ChargeUsage = Callable[[str, str, int, int, "float | None", str], None]

_CURRENT: contextvars.ContextVar[ToolContext | None] = contextvars.ContextVar("jupyter_brain_tool", default=None)


class ToolContext:
    """One tool call's line back to its turn; every method is safe from any thread."""

    def __init__(self, call_id: str, *, step: int = 0, emit: Emit | None = None,
                 charge_usage: ChargeUsage | None = None, user_waited: Callable[[float], None] | None = None) -> None:
        self.call_id = call_id
        self.step = step
        self._emit = emit
        self._charge = charge_usage
        self._user_waited = user_waited  # the turn's deadline moves by the user's time (TurnBudget.extend)
        self._lock = threading.Lock()
        self._closed = False
        self._cancelled = False
        self._on_cancel: list[Callable[[], None]] = []
        self._asking = 0  # blocks inside waiting_for_user() now
        self._asked_since = 0.0
        self._asked_s = 0.0  # time spent in finished waiting_for_user() blocks

    # reports ---------------------------------------------------------------------------------
    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """A progress notification for this call's timeline row."""
        from .events import ToolProgress

        self._send(ToolProgress(step=self.step, call_id=self.call_id, progress=float(progress),
                                total=None if total is None else float(total), message=message))

    def log(self, server: str, level: str, message: str, logger: str | None = None) -> None:
        """A log line of the server this call talks to (the event log's ``server_log``)."""
        from .events import ServerLog

        self._send(ServerLog(step=self.step, call_id=self.call_id, server=server, level=level,
                             logger=logger, message=message))

    def usage(self, provider: str, model: str, input_tokens: int, output_tokens: int,
              cost_usd: float | None = None, label: str = "") -> None:
        """Model usage made for this call (e.g. an MCP sampling request): counted in the
        turn's tokens and cost (and so in its cost cap), and shown as a ``usage`` event."""
        with self._lock:
            if self._closed or self._charge is None:
                return
            charge = self._charge
        with self.active():  # the turn's sink names this call (from whichever thread reports)
            charge(provider, model, int(input_tokens), int(output_tokens), cost_usd, label)

    def _send(self, event: Any) -> None:
        with self._lock:
            if self._closed or self._emit is None:
                return
            emit = self._emit
        try:
            emit(event)
        except Exception:  # a report must never fail the tool
            log.exception("a tool's report could not be emitted")

    # the user's time ---------------------------------------------------------------------------
    @contextmanager
    def waiting_for_user(self) -> Any:
        """A block in which the call waits for the user (an approval card for a server's
        sampling request): its time counts neither against the tool's timeout (``left_s``)
        nor against the turn's deadline (``user_waited``)."""
        with self._lock:
            self._asking += 1
            if self._asking == 1:
                self._asked_since = time.monotonic()
        try:
            yield self
        finally:
            with self._lock:
                if self._asking == 1:
                    span = time.monotonic() - self._asked_since
                    self._asked_s += span
                    if self._user_waited is not None:  # before `waiting` turns false: the executor
                        self._user_waited(span)  # must never see a wait ended and the turn's deadline unmoved
                self._asking -= 1

    @property
    def waiting(self) -> bool:
        """The call is waiting for the user right now."""
        return self._asking > 0

    def waited_s(self) -> float:
        """Seconds this call has spent waiting for the user so far (the executor and the MCP
        client add them to the tool's timeout)."""
        with self._lock:
            ongoing = time.monotonic() - self._asked_since if self._asking else 0.0
            return self._asked_s + ongoing

    def left_s(self, timeout_s: float, elapsed_s: float) -> float | None:
        """Seconds left of ``timeout_s`` after ``elapsed_s``, the user's time not counted; None
        while the user is being asked (the call's clock stands still). The executor's wait, the
        MCP request's bound and the worker's bound all read it."""
        if self.waiting:
            return None
        return timeout_s + self.waited_s() - elapsed_s

    # cancellation ----------------------------------------------------------------------------
    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` when the executor abandons this call (at once if it already has);
        returns a function that unregisters it."""
        with self._lock:
            if not self._cancelled:
                self._on_cancel.append(callback)
                return lambda: self._forget(callback)
        _safely(callback)
        return lambda: None

    def _forget(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if callback in self._on_cancel:
                self._on_cancel.remove(callback)

    def cancel(self) -> None:
        """The executor gave up on the call: tell whoever registered, once."""
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            callbacks, self._on_cancel = self._on_cancel, []
        for callback in callbacks:
            _safely(callback)

    def close(self) -> None:
        """The call has ended (its result, or the executor's verdict, is out): drop later reports."""
        with self._lock:
            self._closed = True

    @contextmanager
    def active(self) -> Any:
        """This context as ``current_tool_context()`` within the block."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)


def current_tool_context() -> ToolContext | None:
    """The context of the tool call running on this thread, if any."""
    return _CURRENT.get()


def _safely(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:  # one failing cancellation must not stop the others
        log.exception("a tool's cancellation callback failed")


@dataclass
class _Running:
    emit: Emit
    charge_usage: ChargeUsage | None


class TurnEvents:
    """The turn that is running in this process (a kernel runs one at a time), for what
    arrives outside any tool call: an MCP server's log line between calls."""

    _lock = threading.Lock()
    _running: list[_Running] = []

    @classmethod
    @contextmanager
    def enter(cls, emit: Emit, charge_usage: ChargeUsage | None = None) -> Any:
        entry = _Running(emit, charge_usage)
        with cls._lock:
            cls._running.append(entry)
        try:
            yield
        finally:
            with cls._lock:
                if entry in cls._running:
                    cls._running.remove(entry)

    @classmethod
    def current(cls) -> _Running | None:
        with cls._lock:
            return cls._running[-1] if cls._running else None


def running_turn() -> Emit | None:
    """The running turn's emitter (the innermost, if turns nest), or None between turns."""
    entry = TurnEvents.current()
    return None if entry is None else entry.emit


def running_turn_usage() -> ChargeUsage | None:
    """The running turn's usage sink, or None between turns."""
    entry = TurnEvents.current()
    return None if entry is None else entry.charge_usage
