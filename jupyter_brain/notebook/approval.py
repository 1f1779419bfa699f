"""Asking the user before a tool writes or executes: the approval card, or stdin.

A running ``%%agent`` cell keeps the kernel's main thread busy, so a click on the card's
button would sit unread until the cell ended. On ipykernel ≥ 7 the view's messages are
routed to a kernel subshell (``jupyter_brain.notebook.kernel_channel``) and arrive at once; on
older kernels the approver pumps pending messages with ``jupyter_ui_poll`` while it
waits (execute requests that arrive meanwhile are queued and replayed after the cell).

Where no widget front-end answers (terminal IPython, nbconvert, a closed browser tab)
the approver asks on stdin if the kernel allows it, and otherwise denies with a reason
the model is told.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..agent.executor import Approval
from ..agent.tools import format_tool_output

READY_WAIT_S = 2.0  # how long a widget front-end may take to report that it holds the view
POLL_SLEEP_S = 0.05


def ask_on_stdin(call: Any, spec: Any, arguments: Any, *, ask: Callable[[str], str] | None = None) -> Approval:
    """A y/N prompt (Jupyter shows an input box; a terminal reads a line)."""
    ask = ask or input  # looked up per call: IPython swaps ``input`` per execution
    shown = format_tool_output(arguments)
    if len(shown) > 800:
        shown = shown[:800] + "…"
    try:
        answer = ask(f"Allow {spec.name} ({spec.effect}) with {shown}? [y/N] ")
    except EOFError:
        return Approval(False, by="no_frontend", channel="stdin")
    except Exception as exc:  # StdinNotImplementedError (nbclient, nbval); anything else re-raised
        if type(exc).__name__ == "StdinNotImplementedError":
            return Approval(False, by="no_frontend", channel="stdin")
        raise
    return Approval(answer.strip().lower() in ("y", "yes"), by="user", channel="stdin")


class NotebookApprover:
    """``approver(call, spec, arguments)`` for ``%%agent``: the AgentView's card first.

    ``view`` has ``decision_for(call_id)`` and ``frontend_ready`` (``AgentView``), or is
    None (no widget). ``pump`` processes pending kernel messages; the default uses
    ``jupyter_ui_poll`` in a kernel and does nothing elsewhere.
    """

    def __init__(
        self,
        view: Any | None,
        *,
        timeout_s: float = 300.0,
        stdin: Callable[[Any, Any, Any], Approval] = ask_on_stdin,
        pump: Callable[[], Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if timeout_s <= 0:
            raise ValueError("the approval timeout must be positive")
        self.view = view
        self.timeout_s = float(timeout_s)
        self._stdin = stdin
        self._pump = pump
        self._clock = clock
        self._sleep = sleep

    def __call__(self, call: Any, spec: Any, arguments: Any) -> Approval:
        if self.view is None or not hasattr(self.view, "decision_for"):
            return self._stdin(call, spec, arguments)
        # A view whose messages go to a kernel subshell needs no pumping.
        given = self._pump if self._pump is not None else (
            (lambda: None) if getattr(self.view, "messages_routed", False) else None)
        with _Pumping(given) as pump:
            started = self._clock()
            while True:
                pump()
                decision = self.view.decision_for(call.id)
                if decision is not None:
                    return Approval(decision, by="user", channel="widget")
                waited = self._clock() - started
                if not getattr(self.view, "frontend_ready", False) and waited >= READY_WAIT_S:
                    break  # no widget front-end holds the view: ask another way
                if waited >= self.timeout_s:
                    return Approval(False, by="timeout", channel="widget")
                self._sleep(POLL_SLEEP_S)
        return self._stdin(call, spec, arguments)


class _Pumping:
    """A context giving a ``pump()`` that processes the kernel's pending messages."""

    def __init__(self, pump: Callable[[], Any] | None) -> None:
        self._given = pump
        self._ctx: Any = None

    def __enter__(self) -> Callable[[], Any]:
        if self._given is not None:
            return self._given
        try:
            from IPython import get_ipython

            shell = get_ipython()
            if shell is None or getattr(shell, "kernel", None) is None:
                return lambda: None
            from jupyter_ui_poll import ui_events

            self._ctx = ui_events()
            poll = self._ctx.__enter__()
            return lambda: poll(20)
        except Exception:  # noqa: BLE001 - no kernel, or jupyter_ui_poll cannot hook it
            self._ctx = None
            return lambda: None

    def __exit__(self, *exc: Any) -> None:
        if self._ctx is not None:
            self._ctx.__exit__(*exc)
