"""Letting a widget's front-end messages reach the kernel while a cell is running.

A ``%%agent`` cell blocks the kernel's main thread for the whole turn, and the main
thread is where ipykernel handles shell messages: a click on an approval button would
wait until the cell ended. Two ways through, newest kernel first:

* ipykernel ≥ 7 has *subshells* (JEP 91): extra shell threads with their own event loop,
  and it routes a comm's messages to the subshell named by the comm's
  ``_reply_subshell_for``. ``route_to_subshell(widget)`` creates one subshell per kernel
  and points the widget's comm at it, so its messages are handled on that thread at
  once, whatever the main thread is doing.
* older kernels: ``jupyter_ui_poll`` processes pending messages from inside the cell
  (see ``jupyter_brain.notebook.approval``).

Both lean on kernel internals; every step is guarded and a failure only means the
caller falls back (to pumping, then to stdin).

A routed comm handles its messages *without* the shell's ``pre_execute`` and
``post_execute`` events, which the ``comm`` package fires around every message callback
so that a widget callback behaves like a small cell. On a subshell that callback runs
while the cell runs on the main thread, and those events belong to that cell: the inline
matplotlib backend's ``post_execute`` hook shows and *closes every open figure*, so an
approval click or the extension's ``ready`` arriving mid-``run_python`` closed the figure
the agent's code had just drawn, before the tool could capture it (the figure was lost:
shown on the subshell's message, which no cell displays). Our callbacks draw nothing.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

log = logging.getLogger("jupyter_brain.notebook.kernel_channel")

_lock = threading.Lock()
_subshells: dict[int, str] = {}  # id(kernel) -> the subshell id created for widget messages


def _kernel() -> Any | None:
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except Exception:  # noqa: BLE001
        return None
    return getattr(shell, "kernel", None) if shell is not None else None


def _subshell_id(kernel: Any) -> str | None:
    """The kernel's widget subshell, created on first use (None if unsupported)."""
    if not getattr(kernel, "_supports_kernel_subshells", False):
        return None
    with _lock:
        known = _subshells.get(id(kernel))
        if known is not None:
            return known
        try:
            socket = kernel.shell_channel_thread.manager.control_to_shell_channel.from_socket
            socket.send_json({"type": "create"})
            if not socket.poll(5000):
                log.warning("no answer from the kernel's shell channel thread; not using a subshell")
                return None
            reply = socket.recv_json()
        except Exception as exc:  # noqa: BLE001 - a kernel without this machinery
            log.debug("cannot create a subshell: %s", exc)
            return None
        if not isinstance(reply, dict) or reply.get("status") != "ok" or not reply.get("subshell_id"):
            log.warning("the kernel refused a subshell: %s", reply)
            return None
        _subshells[id(kernel)] = reply["subshell_id"]
        return reply["subshell_id"]


def route_to_subshell(widget: Any) -> bool:
    """Handle ``widget``'s front-end messages on a kernel subshell thread.

    Returns False where the kernel cannot (no kernel, ipykernel < 7, subshells off):
    then messages arrive only when the main thread is free or pumped.
    """
    kernel = _kernel()
    comm = getattr(widget, "comm", None)
    if kernel is None or comm is None or not hasattr(comm, "_reply_subshell_for"):
        return False
    subshell = _subshell_id(kernel)
    if subshell is None:
        return False
    # An instance attribute shadows the method that ipykernel consults for each comm
    # message; the method's own default follows the last publisher, which is the main
    # shell here (the live batches), so it cannot be used as is.
    comm._reply_subshell_for = lambda data, default: subshell
    comm.handle_msg = _without_cell_events(comm)
    return True


def _without_cell_events(comm: Any) -> Any:
    """``comm.handle_msg`` minus the ``pre_execute``/``post_execute`` events around the
    callback (``comm.base_comm.BaseComm.handle_msg`` fires them; see the module's doc)."""

    def handle_msg(msg: dict[str, Any]) -> None:
        callback = getattr(comm, "_msg_callback", None)
        if callback is not None:
            callback(msg)

    return handle_msg
